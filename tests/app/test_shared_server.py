"""The dashboard served to many users from one machine: no link, upload or text field can
exhaust its memory, show a traceback or inject Markdown, and results are shared only between
sessions that loaded the same data the same way (AppTest, headless Streamlit)."""

from __future__ import annotations

import resource
import time
import tomllib

import numpy as np
import pytest
import streamlit.testing.v1 as st_testing
from conftest import ROOT

from bnma_core.limits import INPUT_RANGES

AppTest = st_testing.AppTest

TIMEOUT = 120


def _no_failure(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _from_link(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    return at


def _warnings(at: AppTest) -> str:
    return " ".join(_plain(w.value) for w in at.warning)


def _plain(markdown: str) -> str:
    """Escaped Markdown read back as the text it shows (backslash escapes removed)."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- links: every restored value checked against its widget's range, before anything is built


def test_absurd_class_bins_in_a_link_are_not_used():
    before = _peak_rss_mb()
    start = time.perf_counter()
    at = _from_link({"src": "bundled", "file": "wbc.csv", "target": "clump_thickness",
                     "cbins": "30000000"})
    seconds = time.perf_counter() - start
    _no_failure(at)
    assert ("The number of class groups must be between 2 and 10 (got 30,000,000)."
            in _warnings(at))
    ds = at.session_state["bnma_dataset"]
    assert ds.class_name == "clump_thickness"
    assert ds.classes == [str(v) for v in range(1, 11)]  # not grouped: the default (0)
    assert _peak_rss_mb() - before < 300  # was +2.3 GB in 7 s
    assert seconds < 60


def test_absurd_row_count_in_a_link_is_not_used():
    before = _peak_rss_mb()
    at = _from_link({"src": "network", "net": "alarm", "rows": "3000000", "seed": "6"})
    _no_failure(at)
    assert ("The number of rows to sample must be between 50 and 50,000 (got 3,000,000)."
            in _warnings(at))
    ds = at.session_state["bnma_dataset"]
    assert ds.n_rows == INPUT_RANGES["rows"].default == 1000
    assert at.number_input(key="app_net_rows").value == 1000
    assert at.session_state["bnma_dataset_label"] == "alarm sample (1000 rows, seed 6)"
    assert _peak_rss_mb() - before < 300  # was +1.6 GB, kept in the cache


@pytest.mark.parametrize("params, words", [
    ({"src": "network", "net": "asia", "seed": "-1"}, "seed must be between 0"),
    ({"src": "network", "net": "asia", "rows": "-5"}, "rows to sample must be between 50"),
    ({"src": "network", "net": "asia", "rows": "many"}, "must be a whole number"),
    ({"src": "bundled", "file": "wbc.csv", "disc": "quantile", "bins": "99"},
     "groups per numeric column must be between 2 and 10 (got 99)"),
    ({"src": "bundled", "file": "wbc.csv", "disc": "everything"}, "disc='everything'"),
    ({"src": "bundled", "file": "wbc.csv", "target": "t" * 5000}, "5,000 characters long"),
    ({"src": "bundled", "file": "wbc.csv", "keep": ",".join(f"c{j}" for j in range(9000))},
     "names 9,000 columns in keep"),
])
def test_out_of_range_link_values_get_one_sentence_and_the_default(params, words):
    at = _from_link(params)
    _no_failure(at)  # was a traceback (seed, rows) or StreamlitValueAboveMaxError (bins)
    assert words in _warnings(at)
    assert "bnma_dataset" in at.session_state  # built with the defaults
    at.run()  # and on every rerun
    _no_failure(at)


def test_widgets_and_links_share_one_table_of_ranges():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.radio(key="app_source").set_value("network").run()
    rows = at.number_input(key="app_net_rows")
    assert (rows.min, rows.max) == (INPUT_RANGES["rows"].low, INPUT_RANGES["rows"].high)
    seed = at.number_input(key="app_net_seed")
    assert (seed.min, seed.max) == (INPUT_RANGES["seed"].low, INPUT_RANGES["seed"].high)


def test_path_traversal_through_file_and_net_is_refused():
    """(Held up: the bundled file and network are chosen from whitelists.)"""
    for params in ({"src": "bundled", "file": "../../../etc/passwd"},
                   {"src": "bundled", "file": "/etc/passwd"},
                   {"src": "network", "net": "../../etc/passwd"},
                   {"src": "network", "net": "alarm/../../x"}):
        at = _from_link(params)
        _no_failure(at)
        text = " ".join(e.value for e in at.error) + _warnings(at)
        assert "root:" not in text
        label = at.session_state["bnma_dataset_label"] if "bnma_dataset" in at.session_state \
            else ""
        assert "passwd" not in label and ".." not in label


# --- uploads: refused at once, and the refusal remembered ---------------------------------


def _wide_csv(n_columns: int, n_rows: int) -> bytes:
    rng = np.random.default_rng(0)
    lines = [",".join(f"g{j}" for j in range(n_columns - 1)) + ",class"]
    lines += [",".join(map(str, rng.integers(0, 3, n_columns - 1))) + "," + "ab"[r % 2]
              for r in range(n_rows)]
    return ("\n".join(lines) + "\n").encode()


def test_a_very_wide_upload_is_refused_at_once_and_not_read_again(monkeypatch):
    import bnma_core.data as data
    import bnma_ui.cache as cache

    reads = []
    real = data.read_table
    counted = lambda *a, **k: reads.append(1) or real(*a, **k)  # noqa: E731
    monkeypatch.setattr(data, "read_table", counted)  # (load_dataset's, and app.py's import)
    monkeypatch.setattr(cache, "read_table", counted, raising=False)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.radio(key="app_source").set_value("upload").run()
    raw = _wide_csv(60_000, 3)
    start = time.perf_counter()
    at.file_uploader(key="app_upload").set_value(("wide.csv", raw, "text/csv")).run()
    seconds = time.perf_counter() - start
    _no_failure(at)
    assert "60,000 columns; at most 5,000" in _plain(at.error[0].value)
    assert seconds < 20  # was about 80 s (and again on every rerun)
    n = len(reads)
    at.run()
    at.run()
    _no_failure(at)
    assert len(reads) == n and at.error  # the refusal is remembered by content hash


def test_upload_and_dataset_caches_are_bounded_by_bytes_and_age():
    from bnma_ui.cache import DATASET_CACHE_BYTES, TABLE_CACHE_BYTES, dataset_cache, table_cache

    for store, limit in ((table_cache(), TABLE_CACHE_BYTES),
                         (dataset_cache(), DATASET_CACHE_BYTES)):
        assert store.max_bytes == limit and store.ttl <= 3600
    assert TABLE_CACHE_BYTES + DATASET_CACHE_BYTES <= 1024 * 2**20


def test_cached_data_is_forgotten_when_it_exceeds_its_bytes(monkeypatch):
    import bnma_ui.cache as cache

    store = cache.ResultStore(max_entries=32, max_bytes=1_000_000, ttl=1e9)
    raws = [_wide_csv(20, 2_000 + i) for i in range(6)]  # ~ 0.1 MB files, ~0.3 MB datasets
    for raw in raws:
        ds = cache.memo(store, cache.content_hash(raw), lambda raw=raw: cache.load_dataset(raw),
                        "")
        again = cache.memo(store, cache.content_hash(raw), lambda: pytest.fail("recomputed"),
                           "")
        assert again is not ds and again.fingerprint() == ds.fingerprint()  # a copy
    assert store.nbytes <= 1_000_000 and 0 < len(store) < 6
    refused = cache.content_hash(b"x,class\n1,a\n")
    with pytest.raises(cache.DataError):
        cache.memo(store, refused, lambda: cache.load_dataset(b"x,class\n1,a\n"), "")
    with pytest.raises(cache.DataError, match="only 1 data row"):  # remembered, not recomputed
        cache.memo(store, refused, lambda: pytest.fail("computed again"), "")


# --- no traceback reaches the browser ------------------------------------------------------


def test_the_server_shows_no_error_details():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # "none": a generic message only ("false" is deprecated and still shows the traceback)
    assert config["client"]["showErrorDetails"] == "none"


# --- a result store entry is read once --------------------------------------------------------


def test_a_result_evicted_by_another_session_is_treated_as_absent(monkeypatch):
    """``key in store`` then ``store[key]`` raced with another session's eviction."""
    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path
    from bnma_ui.cache import ResultStore, result_store

    store = result_store()
    monkeypatch.setattr(ResultStore, "__contains__", lambda self, key: True)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.switch_page("pages/1_Compare_methods.py")
    at.session_state["bnma_dataset"] = load_dataset(bundled_path("wbc.csv"))
    at.run()
    at.multiselect(key="cmp_methods").set_value(["nb"])
    at.slider(key="cmp_folds").set_value(2)
    at.number_input(key="cmp_seed").set_value(424242)  # in no store
    at.button[0].click().run()
    _no_failure(at)  # was KeyError
    assert at.session_state["compare__bnma_bg"] is not None  # a run was started instead
    assert store.get(("nothing",)) is None


def test_an_expired_result_is_absent_on_the_one_read(monkeypatch):
    import bnma_ui.cache as cache

    clock = [1000.0]
    monkeypatch.setattr(cache.time, "time", lambda: clock[0])
    store = cache.ResultStore(ttl=60.0)
    store["k"] = np.zeros(3)
    clock[0] += 30
    assert store.get("k") is not None  # used: its age starts again
    clock[0] += 61
    assert store.get("k") is None
    with pytest.raises(KeyError):
        store["k"]


# --- results keyed on the raw data ----------------------------------------------------------


def _two_files_one_encoding() -> tuple[bytes, bytes]:
    """Two CSVs whose encoded datasets are equal (same codes, names, states: same fingerprint)
    but whose raw values differ, so cross-validation, which refits the bins on the raw values
    of each training fold, gives different results."""
    rng = np.random.default_rng(5)
    n = 80
    y = rng.choice(["a", "b"], n)
    x = np.where(y == "a", rng.normal(0, 1, n), rng.normal(1, 1, n)).round(3)
    middle = np.argsort(x)[n // 2 - 1: n // 2 + 1]  # the two values the median averages
    shift = rng.uniform(0.5, 3, n).round(3)
    shift[middle] = 0
    other = np.where(x <= np.median(x), x - shift, x + shift)  # each on its side of the median
    files = []
    for values in (x, other):
        lines = ["x,z,y"] + [f"{v},{'pq'[i % 2]},{c}" for i, (v, c) in enumerate(zip(values, y))]
        files.append(("\n".join(lines) + "\n").encode())
    return files[0], files[1]


def _upload(raw: bytes) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.radio(key="app_source").set_value("upload").run()
    at.file_uploader(key="app_upload").set_value(("data.csv", raw, "text/csv")).run()
    _no_failure(at)
    return at


def test_results_are_shared_only_for_the_same_raw_data_and_settings():
    from bnma_core.data import load_dataset
    from bnma_ui import state

    a, b = _two_files_one_encoding()
    ds_a, ds_b = load_dataset(a), load_dataset(b)
    assert ds_a.fingerprint() == ds_b.fingerprint()  # the old key could not tell them apart
    assert state.content_id(ds_a) != state.content_id(ds_b)
    at_a, at_b, at_a2 = _upload(a), _upload(b), _upload(a)
    origin = [t.session_state["bnma_dataset_origin"][1] for t in (at_a, at_b, at_a2)]
    assert origin[0] != origin[1] and origin[0] == origin[2]
    at_a.radio(key="app_missing").set_value("drop").run()  # another setting: another key
    assert at_a.session_state["bnma_dataset_origin"][1] != origin[0]


# --- user text is shown as text -------------------------------------------------------------

HOSTILE = "[click](http://evil.example/x) ![i](http://evil.example/i.png) **b** $x$ :red[r]"


def _live_markdown(text: str) -> str:
    """``text`` without its code spans and backslash escapes: what Markdown would still
    interpret (a code span is shown literally)."""
    import re

    text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)
    return re.sub(r"\\[!-/:-@\[-`{-~]", "", text)


def _forms_markup(text: str) -> bool:
    """A link, an image, a bare URL or emphasis would be formed from ``text``."""
    live = _live_markdown(text)
    return any(m in live for m in ("](", "![", "http:", "**", "$x$", ":red["))


def test_md_escape_and_md_code_render_as_literal_text():
    from bnma_ui.widgets import md_code, md_escape

    assert _forms_markup(HOSTILE)
    escaped = md_escape(HOSTILE + "\n\n# heading")
    assert not _forms_markup(escaped) and "\n" not in escaped
    # GitHub-flavoured Markdown links a bare http://... or www.... even when its punctuation is
    # escaped: the shown text must not hold one (a word joiner breaks it, invisibly)
    shown = _plain(escaped)
    assert "://" not in shown and "www." not in md_escape("see www.evil.example")
    assert shown.replace("\u2060", "") == HOSTILE + " # heading"
    for text in ("a`b", "``x``", HOSTILE):
        assert not _forms_markup(md_code(text)) and md_code(text).strip("` ") == text.strip("`")


def _all_markdown(at: AppTest) -> list[str]:
    out = [m.value for m in at.markdown] + [c.value for c in at.caption]
    out += [w.value for w in at.warning] + [e.value for e in at.error]
    out += [i.value for i in at.info] + [s.value for s in at.subheader]
    out += [m.value for m in at.sidebar.markdown] + [c.value for c in at.sidebar.caption]
    out += [w.value for w in at.sidebar.warning]
    return out


def _assert_no_link_or_image(at: AppTest) -> None:
    for text in _all_markdown(at):
        live = _live_markdown(text)
        assert "http://evil" not in live and "![" not in live, text


def test_a_link_naming_an_upload_shows_its_name_as_text():
    at = _from_link({"src": "upload", "file": HOSTILE})
    _no_failure(at)
    at.radio(key="app_source").set_value("upload").run()
    assert "evil.example" in _warnings(at)
    _assert_no_link_or_image(at)


def test_file_and_column_names_from_an_upload_are_shown_as_text():
    rng = np.random.default_rng(1)
    name = "[c](http://evil.example/c)"
    lines = [f"x,{name}"] + [f"{v},{'ab'[i % 2]}" for i, v in enumerate(rng.integers(0, 3, 40))]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.radio(key="app_source").set_value("upload").run()
    at.file_uploader(key="app_upload").set_value(
        (HOSTILE + ".csv", ("\n".join(lines) + "\n").encode(), "text/csv")).run()
    _no_failure(at)
    assert at.session_state["bnma_dataset"].class_name == name
    _assert_no_link_or_image(at)
    texts = " ".join(_all_markdown(at))
    assert "evil.example" in texts  # shown, as text
