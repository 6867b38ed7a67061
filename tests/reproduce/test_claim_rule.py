"""One rule for every claim decided over repetitions (issue 33 item 12): the Reports page
decided Hwang & Zhang's Spearman claims from 2 repetitions while the accuracy claims said "not
checkable: fewer than 5 repetitions"."""

from __future__ import annotations

import pandas as pd

from bnma_core.reproduce.report import (
    MIN_REPETITIONS,
    NOT_CHECKABLE,
    NOT_REPRODUCED,
    REPRODUCED,
    over_repetitions,
)


def test_the_rule():
    assert over_repetitions(True, 2) == (REPRODUCED, "")
    status, why = over_repetitions(False, MIN_REPETITIONS - 1, "lower")
    assert status == NOT_CHECKABLE and f"fewer than {MIN_REPETITIONS} repetitions" in why
    assert over_repetitions(False, MIN_REPETITIONS, "lower") == (NOT_REPRODUCED, "lower")


def test_spearman_claims_follow_the_rule_of_the_accuracy_claims():
    from bnma_core.reproduce.hwang2005 import _spearman_claims

    two_reps = pd.DataFrame({"n_train": [25, 25, 1000, 1000],
                             "spearman": [0.3, 0.2, 0.1, 0.15]})  # every claim misses
    claims = _spearman_claims(two_reps)
    assert [c["status"] for c in claims] == [NOT_CHECKABLE] * 3
    assert all("fewer than 5 repetitions" in c["reason"] for c in claims)
    five = pd.DataFrame({"n_train": [25] * 5 + [1000] * 5,
                         "spearman": [0.3] * 5 + [0.1] * 5})
    assert [c["status"] for c in _spearman_claims(five)] == [NOT_REPRODUCED] * 3
