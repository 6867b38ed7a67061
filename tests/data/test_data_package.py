"""``bnma_core.data`` is a package of stages (base, labels, reading, encoding, dataset,
preparation, loaders) behind one front door: every name the former single module offered is
still importable from ``bnma_core.data``, and the package never imports the scores."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest
from conftest import ROOT

import bnma_core.data as data
import bnma_core.scores as scores

STAGES = ["base", "labels", "reading", "encoding", "dataset", "preparation", "loaders"]

FORMER_NAMES = [  # the public names of the former bnma_core/data.py
    "CLASS_COLUMN_NAMES", "CODE_DTYPE", "ColumnCoding", "DECIMAL_MARKS", "DISCRETIZATIONS",
    "DataError", "DiscreteDataset", "DiscreteEncoder", "HEAD_BYTES", "MAX_BINS",
    "MAX_CATEGORIES", "MAX_CELLS", "MAX_CLASS_VALUES", "MAX_COLUMNS", "MAX_INT_CATEGORIES",
    "MAX_ROWS", "MIN_COMPLETE_ROWS", "MISSING", "MISSING_POLICIES", "NA_STRINGS",
    "PYARROW_MIN_BYTES", "SEPARATORS", "check_class_bins", "check_discretization",
    "choose_class_column", "dataset_from_codes", "encode_labels", "informative_features",
    "load_dataset", "numeric_class_warning", "prepare_frame", "prepare_frame_rows",
    "read_table",
    # private helpers that tests import or patch
    "_cut_labels", "_cut_points", "_encode_transposed", "_factorizing_once", "_is_na",
    "_label", "_read_pyarrow", "_state_labels",
]


@pytest.mark.parametrize("name", FORMER_NAMES)
def test_every_former_name_is_importable_from_the_package(name):
    assert getattr(data, name) is not None
    exec(f"from bnma_core.data import {name}", {})


def _defined(module) -> list[str]:
    """Names a stage defines itself (not the ones it imports)."""
    tree = ast.parse(open(module.__file__, encoding="utf-8").read())
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.append(node.name)
        elif isinstance(node, ast.Assign):
            out += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign):
            out.append(node.target.id)
    return out


def test_each_public_name_of_a_stage_is_the_package_s_and_has_one_home():
    homes = {}
    for stage in STAGES:
        module = importlib.import_module(f"bnma_core.data.{stage}")
        for name in _defined(module):
            assert name not in homes, f"{name} defined in {homes.get(name)} and {stage}"
            homes[name] = stage
            if not name.startswith("_"):
                assert getattr(data, name) is getattr(module, name), name
                assert name in data.__all__, name
    assert set(data.__all__) <= set(FORMER_NAMES) | set(homes)
    assert not (ROOT / "bnma_core" / "data.py").exists()


def test_informative_features_lives_with_the_information_measures():
    assert data.informative_features is scores.informative_features
    assert "informative_features" in dir(data)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        data.not_a_name  # noqa: B018


def test_importing_the_data_package_does_not_import_the_scores():
    code = ("import sys, bnma_core.data; print('bnma_core.scores' in sys.modules); "
            "from bnma_core.data import informative_features; "
            "print('bnma_core.scores' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
