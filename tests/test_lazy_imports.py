"""Heavy dependencies stay out of the imports that do not need them (issue 15: memory after
importing the order-BMA module; ``benchmarks/import_time.py`` measures it). Each check runs in a
fresh interpreter, since this test process has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numba", "llvmlite", "sklearn", "scipy", "networkx", "plotly", "streamlit", "dask",
         "distributed", "matplotlib", "kaleido")


def _imported(stmt: str) -> set[str]:
    code = (f"import sys, json; {stmt}; "
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1])) & set(HEAVY)


def test_core_data_and_registry_import_no_heavy_module():
    """Reading data and listing the methods need numpy and pandas only: numba, scikit-learn,
    scipy, networkx and the plotting / dashboard / cluster packages load when a method, a
    kernel or a figure is used."""
    assert _imported("import bnma_core, bnma_core.data, bnma_core.classifiers.registry") == set()


@pytest.mark.parametrize("module", ["bnma_core.classifiers.order_bma", "bnma_core.scores"])
def test_order_bma_path_imports_only_what_it_subclasses_or_compiles(module):
    """The order-BMA module needs numba (its kernels) and scikit-learn (the estimator base
    class, which itself loads scipy); networkx (the fitted edge graph), plotting, the dashboard
    and dask are imported when used."""
    allowed = {"numba", "llvmlite", "sklearn", "scipy"}
    assert _imported(f"import {module}") <= allowed
