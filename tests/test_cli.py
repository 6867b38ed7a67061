"""The ``bnma`` command line: cv / methods / sample and one-line errors with exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from bnma_core.cli import main
from bnma_core.datasets import bundled_path

WBC = str(bundled_path("wbc.csv"))


def run(argv, capsys):
    """(exit status, stdout, stderr) of ``bnma argv`` run in-process."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, fragment):
    assert code == 2
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("bnma: note: ")]
    assert len(lines) == 1, err
    assert lines[0].startswith("bnma") and "error" in lines[0]
    assert fragment in lines[0]


def test_cv_prints_summary_and_writes_results(tmp_path, capsys):
    out = tmp_path / "res.csv"
    code, stdout, _ = run(["cv", "--data", WBC, "--methods", "nb,kdb1", "--folds", "3",
                           "--seed", "2", "--out", str(out), "--no-progress"], capsys)
    assert code == 0
    assert "accuracy" in stdout and "nb" in stdout and "kdb1" in stdout
    assert "wall time" in stdout and "699 rows" in stdout
    res = pd.read_csv(out)
    assert len(res) == 6 and set(res["method"]) == {"nb", "kdb1"}


def test_methods_lists_registry(capsys):
    code, stdout, _ = run(["methods"], capsys)
    assert code == 0
    for name in ("nb", "tan", "kdb1", "kdb2", "kdb"):
        assert any(line.split() and line.split()[0] == name for line in stdout.splitlines())
    assert "Naive Bayes" in stdout


@pytest.mark.parametrize("argv, fragment", [
    (["cv", "--data", "no/such/file.csv"], "File not found"),
    (["cv", "--data", WBC, "--methods", "nb,magic"], "unknown method(s) magic"),
    (["cv", "--data", WBC, "--methods", ","], "no methods given"),
    (["cv", "--data", WBC, "--folds", "0"], "must be at least 2"),
    (["cv", "--data", WBC, "--folds", "ten"], "not a whole number"),
    (["cv", "--data", WBC, "--n-jobs", "0"], "positive number of workers"),
    (["cv", "--data", WBC, "--discretization", "kmeans"], "invalid choice"),
    (["cv", "--data", WBC, "--target", "nope"], "not in the file"),
    (["cv", "--data", WBC, "--folds", "400"], "Use fewer folds"),
    (["cv"], "--data"),
    (["cv", "--data", WBC, "--methods", "nb", "--set", "brai.s=2"], "brai is not among"),
    (["cv", "--data", WBC, "--methods", "nb", "--set", "nb.foo=3"], "no parameter foo"),
    (["cv", "--data", WBC, "--methods", "nb", "--set", "nb"], "METHOD.PARAM=VALUE"),
    (["cv", "--data", WBC, "--methods", "brai", "--set", "brai.max_ci_tests=100"],
     "B-RAI would run about"),
    (["sample", "--rows", "-5", "--out", "x.csv"], "must be at least 1"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(argv, fragment, capsys):
    code, _, err = run(argv, capsys)
    assert_one_line_error(code, err, fragment)


def test_bad_csv_file(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert_one_line_error(*run(["cv", "--data", str(empty)], capsys)[::2], "empty")
    one_col = tmp_path / "one.csv"
    one_col.write_text("a\n1\n2\n")
    assert_one_line_error(*run(["cv", "--data", str(one_col)], capsys)[::2],
                          "at least two are needed")


def test_unwritable_output(tmp_path, capsys):
    code, _, err = run(["cv", "--data", WBC, "--methods", "nb", "--folds", "2",
                        "--no-progress", "--out", str(tmp_path / "no" / "dir" / "r.csv")],
                       capsys)
    assert_one_line_error(code, err, "cannot write")


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "bnma_core", "methods"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "kdb2" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "bnma_core", "cv", "--data", "missing.csv"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_sample_alarm(tmp_path, capsys, monkeypatch):
    out = tmp_path / "alarm.csv"
    code, stdout, _ = run(["sample", "--network", "alarm", "--rows", "200", "--seed", "0",
                           "--out", str(out)], capsys)
    assert code == 0 and "200 rows" in stdout
    df = pd.read_csv(out)
    assert df.shape == (200, 37)
    again = tmp_path / "again.csv"
    run(["sample", "--network", "alarm", "--rows", "200", "--seed", "0", "--out", str(again)],
        capsys)
    pd.testing.assert_frame_equal(df, pd.read_csv(again))
    # streamed block by block, the file holds the rows of the library's one in-memory draw
    from bnma_core.network import load_network, sampling

    chunks = sampling.sample_chunks
    monkeypatch.setattr(sampling, "sample_chunks",
                        lambda bn, n, seed: chunks(bn, n, seed, chunk_rows=64))  # 4 blocks
    code, _, _ = run(["sample", "--network", "alarm", "--rows", "200", "--seed", "0",
                      "--out", str(again), "--no-progress", "--force"], capsys)
    want = load_network("alarm").sample_frame(200, 0)
    for path in (out, again):
        got = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert code == 0 and (got.to_numpy() == want.to_numpy().astype(str)).all()


def test_sample_unknown_network(tmp_path, capsys):
    code, _, err = run(["sample", "--network", "nonet", "--out", str(tmp_path / "x.csv")],
                       capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1


# --- one default with the dashboard, bundled data by name, row numbers (issue 14 items 5, 12) ----

def test_cv_bundled_name_and_missing_option(capsys):
    code, keep, _ = run(["cv", "--data", "wbc", "--methods", "nb", "--folds", "3",
                         "--no-progress"], capsys)
    assert code == 0 and "699 rows (missing values: keep)" in keep
    code, drop, _ = run(["cv", "--data", "wbc", "--methods", "nb", "--folds", "3",
                         "--missing", "drop", "--no-progress"], capsys)
    assert code == 0 and "683 rows (missing values: drop)" in drop
    code, _, err = run(["cv", "--data", "nosuchdata", "--methods", "nb"], capsys)
    assert_one_line_error(code, err, "bundled datasets: wbc")
    code, _, err = run(["cv", "--data", "wbc", "--missing", "impute"], capsys)
    assert_one_line_error(code, err, "invalid choice")


def test_explain_row_numbers_refer_to_the_file(capsys):
    code, out, _ = run(["explain", "--data", "wbc", "--row", "24"], capsys)
    assert code == 0 and "Row 24 of wbc" in out and "other 698 rows" in out
    # with incomplete rows dropped, row 24 is still the file's row 24 (the same instance)
    code, out_drop, _ = run(["explain", "--data", "wbc", "--row", "24", "--missing", "drop"],
                            capsys)
    assert code == 0 and "other 682 rows" in out_drop
    inst = [ln for ln in out.splitlines() if ln.startswith("Instance")]
    assert inst == [ln for ln in out_drop.splitlines() if ln.startswith("Instance")]
    code, _, err = run(["explain", "--data", "wbc", "--row", "23", "--missing", "drop"],
                       capsys)
    assert_one_line_error(code, err, "not in this dataset")
    code, _, err = run(["explain", "--data", "wbc", "--row", "699"], capsys)
    assert_one_line_error(code, err, "past the end")


@pytest.mark.parametrize("argv", [
    ["methods"],
    ["cv", "--data", "wbc", "--methods", "nb", "--folds", "2", "--no-progress"],
    ["explain", "--data", "wbc", "--row", "0"],
])
def test_output_closed_by_reader_ends_quietly(argv):
    """``bnma ... | head``: the reader is gone before anything is written (its end of the pipe
    is closed before the process starts), so every write fails with EPIPE."""
    import os

    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-m", "bnma_core", *argv], stdout=w,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(w)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.stderr.strip() == ""
    assert proc.returncode == 0


def test_cv_set_passes_method_parameters(capsys):
    """--set METHOD.PARAM=VALUE reaches the estimator (Python literals: None, numbers)."""
    code, out, _ = run(["cv", "--data", WBC, "--methods", "brai", "--folds", "2",
                        "--set", "brai.n_structures=3", "--set", "brai.significance=0.01",
                        "--set", "brai.max_ci_tests=None", "--no-progress"], capsys)
    assert code == 0 and "brai" in out
    from bnma_core.cli import _method_params

    assert _method_params(["brai.max_ci_tests=None", "brai.significance=0.01",
                           "nb.cpt_prior=bdeu"], ["brai", "nb"]) == {
        "brai": {"max_ci_tests": None, "significance": 0.01}, "nb": {"cpt_prior": "bdeu"}}


def _european_csv(path, extra_header, extra, n):
    """A semicolon file with decimal commas: ``extra`` columns, then alter (whole numbers,
    repeated), gewicht (decimals) and the class klasse."""
    rows = [f"{extra(i)};{20 + (i * 7) % 45};{50 + (i * 3.7) % 40:.1f};"
            f"{'krank' if (i * 7) % 45 > 22 else 'gesund'}".replace(".", ",") for i in range(n)]
    path.write_text(f"{extra_header};alter;gewicht;klasse\n" + "\n".join(rows) + "\n")
    return path


def test_cv_says_how_the_file_was_read(tmp_path, capsys):
    """Separator, decimal comma, identifier column and binning are reported on stderr, as the
    dashboard reports them; the results are those of the library on the same file."""
    path = _european_csv(tmp_path / "eu.csv", "id;raucher",
                         lambda i: f"p{i};{'ja' if i % 3 else 'nein'}", 60)
    code, stdout, err = run(["cv", "--data", str(path), "--methods", "nb", "--folds", "3",
                             "--no-progress"], capsys)
    assert code == 0 and "60 rows" in stdout
    notes = [ln for ln in err.splitlines() if ln.startswith("bnma: note: ")]
    assert any("semicolon" in n for n in notes) and any("decimal comma" in n for n in notes)
    assert any("Identifier" in n and "id" in n for n in notes)
    assert any("median: alter, gewicht" in n for n in notes), notes


def test_out_of_memory_is_one_line(monkeypatch, capsys):
    from bnma_core import cli

    def boom(args):
        raise MemoryError
    monkeypatch.setitem(cli.COMMANDS, "methods", boom)
    code, _, err = run(["methods"], capsys)
    assert_one_line_error(code, err, "not enough memory")


def test_read_options_drop_sep_and_decimal(tmp_path, capsys):
    """--drop leaves columns out (the remedy the too-many-categories message gives), --sep and
    --decimal override what was detected; explain takes the same options."""
    path = _european_csv(tmp_path / "zip.csv", "zip", lambda i: f"Z{(i * 37) % 90}", 120)
    code, _, err = run(["cv", "--data", str(path), "--methods", "nb", "--folds", "3",
                        "--no-progress"], capsys)
    assert_one_line_error(code, err, "Column 'zip' has 90 different values")
    code, out, err = run(["cv", "--data", str(path), "--methods", "nb", "--folds", "3",
                          "--no-progress", "--drop", "zip", "--sep", ";", "--decimal", ","],
                         capsys)
    assert code == 0 and "120 rows" in out, err
    assert "detected" not in err  # nothing left to detect
    code, _, err = run(["cv", "--data", str(path), "--methods", "nb", "--drop", "nosuch"],
                       capsys)
    assert_one_line_error(code, err, "not in the file: nosuch")
    tab = tmp_path / "tab.csv"
    tab.write_text("a\tb\tclass\n" + "".join(f"{i % 3}\t{i % 2}\t{'xy'[i % 4 < 2]}\n"
                                             for i in range(40)))
    code, out, err = run(["cv", "--data", str(tab), "--methods", "nb", "--folds", "2",
                          "--no-progress", "--sep", "\\t"], capsys)
    assert code == 0 and "40 rows" in out, err
    code, out, err = run(["explain", "--data", str(path), "--drop", "zip", "--row", "0"], capsys)
    assert code == 0 and "Row 0" in out, err
