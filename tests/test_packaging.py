"""Packaging: a clone or a wheel carries everything it needs.

* ``pyproject.toml`` declares exactly the runtime pins of ``requirements.txt`` (one list of
  versions, two readers: ``pip install .`` and ``make``'s ``pip install -r``).
* A wheel built from the sources contains every module, the sample data of the top-level
  ``sample_data/`` folder (as ``bnma_core/datasets/sample_data/``) and the ``bnma`` entry point
  (built offline: ``--no-deps --no-build-isolation``, from a copy of the sources so the checkout
  gets no ``build/``); an editable install of such a copy (what ``make venv`` does) reads the
  copy's ``sample_data/``.
* The shared test fixtures of ``tests/conftest.py`` are what they say.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!-]+)$")


def _norm(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(lines: list[str], where: str) -> dict[str, str]:
    pins = {}
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-r "):
            continue
        m = PIN.match(line)
        assert m, f"{where}: {raw.strip()!r} is not an exact pin name==version"
        assert _norm(m[1]) not in pins, f"{where}: {m[1]} pinned twice"
        pins[_norm(m[1])] = m[2]
    return pins


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _requirements(name: str) -> dict[str, str]:
    return _pins((ROOT / name).read_text(encoding="utf-8").splitlines(), name)


def test_pyproject_dependencies_equal_requirements_pins():
    declared = _pins(_pyproject()["project"]["dependencies"], "pyproject.toml")
    assert declared == _requirements("requirements.txt")


def test_dev_requirements_add_pins_on_top_of_the_runtime_ones():
    text = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
    assert re.search(r"^-r requirements\.txt$", text, flags=re.M)
    dev = _requirements("requirements-dev.txt")
    assert not set(dev) & set(_requirements("requirements.txt")), "pinned in both files"
    assert {"pytest", "ruff"} <= set(dev)


SAMPLE_PACKAGE = "bnma_core.datasets.sample_data"  # the wheel's name for sample_data/


def _package_dirs() -> dict:
    """Every package pyproject.toml must list -> its source folder: each folder of bnma_core
    (data-only folders included) and the top-level sample_data/ under its mapped name."""
    dirs = {".".join(d.relative_to(ROOT).parts): d
            for d in [ROOT / "bnma_core", *(ROOT / "bnma_core").rglob("*")]
            if d.is_dir() and "__pycache__" not in d.parts}
    dirs[SAMPLE_PACKAGE] = ROOT / "sample_data"
    return dirs


def test_entry_point_packages_and_package_data_are_declared():
    proj = _pyproject()
    assert proj["project"]["scripts"]["bnma"] == "bnma_core.cli:main"
    tool = proj["tool"]["setuptools"]
    dirs = _package_dirs()
    assert sorted(tool["packages"]) == sorted(dirs)
    assert tool["package-dir"] == {SAMPLE_PACKAGE: "sample_data"}
    for package, src in dirs.items():
        globs = tool.get("package-data", {}).get(package, [])
        for f in src.iterdir():
            if f.is_file() and f.suffix not in {".py", ".pyc", ".nbi", ".nbc"}:
                assert any(f.relative_to(src).match(g) for g in globs), \
                    f"{f.relative_to(ROOT)} is not covered by {package}'s package data {globs}"


def test_papers_tables_equal_the_specs():
    """The packaged copies of the papers' tables stay the spec files' (when present)."""
    specs = ROOT.parent / "shared" / "specs"
    pairs = {"santafe_table1.csv": "ema-tan-table1.csv",
             "sugahara_table1.csv": "subbagging-table1.csv"}
    tables = ROOT / "bnma_core" / "reproduce" / "tables"
    assert {f.name for f in tables.glob("*.csv")} == set(pairs)
    if not specs.is_dir():
        pytest.skip("the shared specs folder next to the repository is absent")
    for ours, spec in pairs.items():
        assert (tables / ours).read_bytes() == (specs / spec).read_bytes(), ours


def _source_files() -> set[str]:
    """Every file a wheel must carry, by its path in the wheel: the bnma_core sources (caches
    excluded) and the sample data, which the wheel holds as bnma_core/datasets/sample_data/."""
    out = set()
    for f in (ROOT / "bnma_core").rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix not in {".pyc", ".nbi",
                                                                              ".nbc"}:
            out.add(f.relative_to(ROOT).as_posix())
    for f in (ROOT / "sample_data").iterdir():
        out.add(f"bnma_core/datasets/sample_data/{f.name}")
    return out


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    """A copy of what a build reads (so the checkout gets no build/ or egg-info)."""
    src = tmp_path_factory.mktemp("sources") / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("bnma_core", "sample_data"):
        shutil.copytree(ROOT / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    return src


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, sources) -> zipfile.ZipFile:
    tmp = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
           "--no-index", "-q", "-w", str(tmp / "dist"), str(sources)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (path,) = (tmp / "dist").glob("bnma_studio-*.whl")
    with zipfile.ZipFile(path) as zf:
        yield zf


@pytest.mark.slow
def test_wheel_contains_every_module_and_the_bundled_data(wheel):
    names = set(wheel.namelist())
    missing = _source_files() - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    for f in ("wbc.csv", "alarm.bif.gz", "hepar2.bif.gz", "asia.bif.gz", "README.md"):
        assert f"bnma_core/datasets/sample_data/{f}" in names
    assert not [n for n in names
                if n.startswith(("tests/", "experiments/", "pages/", "sample_data/"))]


@pytest.mark.slow
def test_wheel_declares_entry_point_and_pinned_dependencies(wheel):
    info = {n.split("/", 1)[1]: n for n in wheel.namelist() if ".dist-info/" in n}
    entry = wheel.read(info["entry_points.txt"]).decode()
    assert re.search(r"^bnma = bnma_core\.cli:main$", entry, flags=re.M)
    meta = wheel.read(info["METADATA"]).decode()
    requires = [ln.split(":", 1)[1].strip() for ln in meta.splitlines()
                if ln.startswith("Requires-Dist:")]
    assert _pins(requires, "METADATA") == _requirements("requirements.txt")


@pytest.mark.slow
def test_installed_wheel_finds_its_data_outside_the_checkout(wheel, tmp_path):
    """Install the wheel (no deps: they come from this venv) into a folder and use it from
    elsewhere: the bundled data are read from the installed package, not from the checkout."""
    site = tmp_path / "site"
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                          "--target", str(site), wheel.filename],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    code = ("import bnma_core, sys; from bnma_core.datasets import bundled_path; "
            "from bnma_core.data import load_dataset; from bnma_core.network import load_network; "
            "ds = load_dataset(bundled_path('wbc.csv')); bn = load_network('asia'); "
            "print(bnma_core.__file__, bundled_path('wbc.csv'), ds.n_vars, bn.n_vars)")
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    module, data, n_vars, n_nodes = out.stdout.split()
    assert module.startswith(str(site))
    assert data == str(site / "bnma_core" / "datasets" / "sample_data" / "wbc.csv")
    assert (n_vars, n_nodes) == ("10", "8")
    cli = subprocess.run([sys.executable, "-m", "bnma_core", "methods"], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path, env=env)
    assert cli.returncode == 0 and "ukdb" in cli.stdout, cli.stderr
    code = ("from bnma_core.reproduce import santafe, sugahara; "
            "print(len(sugahara.paper_table()), len(santafe.paper_table()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0 and out.stdout.split() == ["26", "90"], out.stderr


@pytest.mark.slow
def test_editable_install_reads_the_top_level_sample_data(sources, tmp_path):
    """``pip install -e`` (what ``make venv`` does) of a copy of the sources into a fresh venv
    whose dependencies come from this one: bnma_core and the sample data are read from the
    copy's own folders, sample_data/ included, from any working directory."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    python = str(venv / "bin" / "python")
    deps = sysconfig.get_paths()["purelib"]  # pip, setuptools and the runtime dependencies
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                          "--no-index", "-q", "-e", str(sources)],
                         capture_output=True, text=True, timeout=600,
                         env={**clean, "PYTHONPATH": deps})
    assert run.returncode == 0, run.stdout + run.stderr
    # the dependencies as a plain path entry (not a site dir: this venv's own editable
    # install of the checkout is not picked up)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run([python, "-c", purelib], capture_output=True, text=True, timeout=120,
                          env=clean).stdout.strip()
    Path(site, "zz_dependencies.pth").write_text(deps + "\n", encoding="utf-8")
    code = ("import bnma_core; from bnma_core.datasets import bundled_path, bundled_networks; "
            "from bnma_core.cli import resolve_data; "
            "print(bnma_core.__file__, bundled_path('wbc.csv'), resolve_data('wbc'), "
            "','.join(bundled_networks()))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env=clean)
    assert out.returncode == 0, out.stderr
    module, data, resolved, networks = out.stdout.split()
    assert module == str(sources / "bnma_core" / "__init__.py")
    assert data == resolved == str(sources / "sample_data" / "wbc.csv")
    assert networks == "alarm,asia,hepar2"


# --- the shared fixtures of tests/conftest.py ------------------------------------------------


def test_root_fixture_is_the_repository(root):
    assert root == ROOT and (root / "pyproject.toml").is_file() and (root / "app.py").is_file()


def test_bundled_fixtures(wbc, wbc_path, alarm):
    assert wbc_path.name == "wbc.csv" and wbc_path.is_file()
    assert wbc.class_name == "class" and wbc.n_rows >= 683 and wbc.n_vars == 10
    assert alarm.n_vars == 37 and "CATECHOL" in alarm.names


def test_small_networks_are_valid_and_tiny(small_networks):
    assert {"chain", "collider", "naive", "asia"} <= set(small_networks)
    for name, bn in small_networks.items():
        assert bn.n_vars <= 8, name
        for cpt in bn.cpts:
            np.testing.assert_allclose(cpt.sum(axis=1), 1.0)
    g = small_networks["collider"].graph
    assert set(g.predecessors("C")) == {"A", "B"}


def test_child_pythons_import_this_checkout(tmp_path):
    """From any working directory, ``python -m ...`` in a subprocess sees this checkout."""
    proc = subprocess.run([sys.executable, "-c", "import bnma_core; print(bnma_core.__file__)"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(ROOT / "bnma_core" / "__init__.py")
