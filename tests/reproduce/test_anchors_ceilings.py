"""``bnma_core.reproduce.anchors.ceilings`` against hand-computed values on a six-row anchors
folder (runs without the shared anchors)."""

from __future__ import annotations

import pytest

from bnma_core.reproduce import anchors as ra


def test_ceilings_by_hand(tmp_path):
    # (a, b, class, fold); cell (0,0) holds n, y, n; (0,1) holds y; (1,1) holds n, n
    rows = [("0", "0", "n", 0), ("0", "0", "y", 1), ("0", "0", "n", 1),
            ("0", "1", "y", 0), ("1", "1", "n", 0), ("1", "1", "n", 1)]
    (tmp_path / "data").mkdir()
    (tmp_path / "folds").mkdir()
    (tmp_path / "data" / "toy.csv").write_text(
        "a,b,class\n" + "".join(f"{a},{b},{c}\n" for a, b, c, _ in rows))
    (tmp_path / "folds" / "toy.weka.txt").write_text("".join(f"{f}\n" for *_, f in rows))
    (tmp_path / "results.csv").write_text("dataset,tool,method,acc_mean\n")
    c = ra.ceilings(tmp_path, datasets=("toy",)).iloc[0]
    assert (c["rows"], c["cells"]) == (6, 3)
    assert c["single_rule"] == pytest.approx(5 / 6)  # 2 + 1 + 2 majority hits
    # fold 0's three rows lie in three cells (3 of 3); fold 1 has n and y in cell (0,0) (2 of 3)
    assert c["fold_oracle"] == pytest.approx((1 + 2 / 3) / 2)
    # fold 0 tested with fold 1's table: (0,0) tie -> class 'n', (0,1) unseen -> majority 'n':
    # 2 of 3; fold 1 with fold 0's table: (0,0) -> 'n' misses the 'y' row: 2 of 3
    assert c["lookup_table"] == pytest.approx(2 / 3)
