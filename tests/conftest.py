"""Shared fixtures: the repository root, the bundled data and networks, small hand-made networks,
and the optional shared data sets (skipped cleanly when absent).

No test depends on the working directory: paths come from :data:`ROOT` (or the ``root``
fixture) and bundled files from :func:`bnma_core.datasets.bundled_path`. ``ROOT`` is the one
module-level constant for tests that need the root outside a fixture (``from conftest import
ROOT``, e.g. to parametrize over the pages).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
"""The repository root (the folder holding ``pyproject.toml``, ``app.py`` and ``pages/``)."""

SHARED_DATA = ROOT.parent / "shared" / "data"
"""Larger data sets kept next to the repository (``<root>/../shared/data``); not part of a clone:
tests that read them use the ``shared_data`` fixture, which skips when the folder is absent."""


@pytest.fixture(scope="session", autouse=True)
def _subprocesses_import_this_checkout():
    """Child Pythons (``python -m bnma_core``, ``streamlit run``) import this checkout's
    ``bnma_core``, whatever the working directory and whichever checkout a shared venv's editable
    install points to — as pytest's ``pythonpath = ["."]`` does for the tests themselves."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([old] if old else []))
    yield
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


SHOTS = ROOT / "screenshots"
"""Where the browser tests put their screenshots (git-ignored); look at them after a run."""


def shot(page, name: str) -> None:
    """Whole-page screenshot ``screenshots/<name>.png`` of a browser test."""
    from bnma_ui.browser import screenshot

    screenshot(page, SHOTS / f"{name}.png")


def no_exception(page) -> None:
    """Fail with the text of Streamlit's exception box when the page shows one."""
    from bnma_ui.browser import exception_text

    text = exception_text(page)
    assert text is None, text


@pytest.fixture(scope="module")
def browser():
    """Headless chromium for the browser tests of one module (skips without it)."""
    from bnma_ui.browser import headless_chromium, missing_requirement

    reason = missing_requirement()
    if reason:
        pytest.skip(f"{reason}; browser test skipped")
    with headless_chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    """A fresh laptop-sized page (60 s locator timeout)."""
    from bnma_ui.browser import laptop_page

    with laptop_page(browser) as pg:
        yield pg


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository root."""
    return ROOT


@pytest.fixture(scope="session")
def wbc_path() -> Path:
    """Path of the bundled Wisconsin breast-cancer CSV (the checkout's ``sample_data/wbc.csv``)."""
    from bnma_core.datasets import bundled_path

    return bundled_path("wbc.csv")


@pytest.fixture(scope="session")
def wbc(wbc_path):
    """The bundled WBC data loaded with the library's defaults (a ``DiscreteDataset``).

    Session-scoped: treat it as read-only (``ds.subset(rows)`` gives a copy)."""
    from bnma_core.data import load_dataset

    return load_dataset(wbc_path)


@pytest.fixture(scope="session")
def alarm():
    """The bundled ALARM network (37 nodes), read once per session; do not modify it."""
    from bnma_core.network import load_network

    return load_network("alarm")


def _small_networks() -> dict:
    from bnma_core.network import DiscreteBN, load_network

    def bn(name, names, parents, cpts, arity=2):
        states = [[f"s{k}" for k in range(arity)] for _ in names]
        return DiscreteBN(names, states, parents, [np.asarray(c, float) for c in cpts],
                          name=name)

    return {
        # A -> B -> C
        "chain": bn("chain", ["A", "B", "C"], [[], ["A"], ["B"]],
                    [[[0.6, 0.4]], [[0.9, 0.1], [0.2, 0.8]], [[0.7, 0.3], [0.1, 0.9]]]),
        # A -> C <- B (rows of C: first parent A varies fastest)
        "collider": bn("collider", ["A", "B", "C"], [[], [], ["A", "B"]],
                       [[[0.5, 0.5]], [[0.3, 0.7]],
                        [[0.9, 0.1], [0.4, 0.6], [0.5, 0.5], [0.05, 0.95]]]),
        # class C -> F1, F2, F3 (naive Bayes shape)
        "naive": bn("naive", ["C", "F1", "F2", "F3"], [[], ["C"], ["C"], ["C"]],
                    [[[0.4, 0.6]], [[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.1, 0.9]],
                     [[0.5, 0.5], [0.25, 0.75]]]),
        "asia": load_network("asia"),
    }


@pytest.fixture(scope="session")
def small_networks() -> dict:
    """Small networks for oracle tests (brute-force enumeration is cheap on all of them):
    ``chain`` (A -> B -> C), ``collider`` (A -> C <- B), ``naive`` (C -> F1, F2, F3), all
    binary, and the bundled ``asia`` (8 nodes). Read-only."""
    return _small_networks()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``<root>/../shared/data`` (larger data sets next to the repository); skips the test
    when the folder is absent, as in a fresh clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent (not part of a clone)")
    return SHARED_DATA


# --- the dashboard served for the browser tests (tests/browser, tests/clustering) ------------


def _warm_numba_cache() -> None:
    """Compile (and cache on disk, ``cache=True``) the order-MCMC kernels the MCMC page uses,
    so that the browser test times the page, not a cold numba compilation on a fresh clone
    while the other test worker compiles too (that took > 2 minutes in CI)."""
    from bnma_core.classifiers.order_bma import OrderMCMCBMA
    from bnma_core.network import load_network

    ds = load_network("alarm").sample(200, seed=0, class_variable="CATECHOL")
    for stop_early in (False, True):
        m = OrderMCMCBMA(n_iter=400, burn_in=50, n_orders=4, n_chains=2, random_state=0)
        gen = m.fit_stream(ds.X, ds.y, every=100, reference_order=list(range(ds.n_vars)))
        for i, _ in enumerate(gen):
            if stop_early and i == 2:
                break
        gen.close()
        m.predict_proba_n_orders(ds.X[:20], 1)
        m.predict_proba(ds.X[:20])


def serve_app(log_name: str, warm=None):
    """``streamlit run app.py`` on a free local port for one browser test module: skips when
    chromium or playwright is missing, runs ``warm()`` first (e.g. compiles numba kernels into
    the disk cache, so the test times the page and not a cold compilation), yields the URL and
    fails the test with the log's name when the server does not start (the checkout served:
    :func:`served_checkout`). The one helper behind
    every browser module's ``server`` fixture::

        @pytest.fixture(scope="module")
        def server():
            yield from serve_app("streamlit_kbest.log", _warm_numba_cache)
    """
    from bnma_ui.browser import missing_requirement, streamlit_server

    reason = missing_requirement()
    if reason:
        pytest.skip(f"{reason}; browser test skipped")
    if warm is not None:
        warm()
    SHOTS.mkdir(exist_ok=True)
    try:
        with streamlit_server(SHOTS / log_name, app_dir=served_checkout()) as (url, _proc):
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc))


def served_checkout() -> Path:
    """The checkout the browser tests serve: this one, or the one named by the environment
    variable ``BNMA_APP_DIR`` (e.g. a worktree of an older commit, to see what the checks
    catch there: ``BNMA_APP_DIR=/tmp/old pytest tests/browser/test_print_geometry.py``)."""
    return Path(os.environ.get("BNMA_APP_DIR") or ROOT)


@pytest.fixture(scope="module")
def server():
    """``streamlit run app.py`` on a free local port (module scope), numba kernels warm."""
    yield from serve_app("streamlit.log", _warm_numba_cache)
