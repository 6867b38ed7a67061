"""The one dataset specification shared by the dashboard and the CLI
(:class:`bnma_core.data.spec.DatasetSpec`), and the dashboard's page order."""

from __future__ import annotations

import pytest

from bnma_core.data import DataError, load_dataset
from bnma_core.data.spec import DatasetSpec
from bnma_core.datasets import bundled_path
from bnma_core.limits import INPUT_RANGES


def test_query_params_round_trip_every_field():
    spec = DatasetSpec(source="bundled", file="wbc.csv", target="class",
                       discretization="quantile", bins=4, missing="drop", sep=";",
                       decimal=",", drop=("a", "b"), class_bins=3, keep=("x", "y"))
    params = spec.to_query_params()
    assert params["sep"] == "semicolon" and params["dec"] == "comma"
    assert params["drop"] == "a,b" and params["disc"] == "quantile" and params["cbins"] == "3"
    back, problems = DatasetSpec.from_query_params(params)
    assert back == spec and problems == []
    net = DatasetSpec(source="network", net="asia", rows=300, seed=7, target="either")
    assert net.to_query_params() == {"src": "network", "net": "asia", "rows": "300",
                                     "seed": "7", "cls": "either"}
    assert DatasetSpec.from_query_params(net.to_query_params()) == (net, [])


def test_query_params_outside_the_widget_ranges_are_left_out_and_said():
    spec, problems = DatasetSpec.from_query_params(
        {"src": "network", "net": "alarm", "rows": "3000000", "seed": "-1"})
    assert spec.rows == INPUT_RANGES["rows"].default and spec.seed == 0
    assert any("between 50 and 50,000 (got 3,000,000)" in p for p in problems)
    assert len(problems) == 2
    spec, problems = DatasetSpec.from_query_params(
        {"src": "bundled", "file": "wbc.csv", "cbins": "30000000", "disc": "cuts",
         "sep": "pipe", "bins": "x", "drop": "a" * 2000})
    assert spec == DatasetSpec(source="bundled", file="wbc.csv")
    assert len(problems) == 5
    assert DatasetSpec.from_query_params({"src": "elsewhere"}) == (None, [])
    assert DatasetSpec.from_query_params({}) == (None, [])


def test_build_reads_like_load_dataset_and_keeps_features():
    spec = DatasetSpec(file="wbc.csv", missing="drop")
    ds = spec.build()
    ref = load_dataset(bundled_path("wbc.csv"), missing="drop")
    assert ds.fingerprint() == ref.fingerprint()
    kept = spec.replace(keep=("cell_size", "cell_shape")).build()
    assert kept.feature_names == ["cell_size", "cell_shape"]
    assert spec.label == "Wisconsin breast cancer (wbc.csv)"
    with pytest.raises(DataError, match="not a feature"):
        spec.replace(keep=("nosuch",)).build()


def test_network_spec_checks_its_numbers_before_sampling():
    ds = DatasetSpec(source="network", net="asia", rows=100, seed=3).build()
    assert ds.n_rows == 100 and ds.class_name == "lung"
    with pytest.raises(DataError, match="between 50 and 50,000"):
        DatasetSpec(source="network", net="asia", rows=3_000_000).build()
    with pytest.raises(DataError, match="no bundled network"):
        DatasetSpec(source="network", net="nosuch").build()
    with pytest.raises(DataError, match="not a variable"):
        DatasetSpec(source="network", net="asia", target="nosuch").build()


def test_cli_and_dashboard_build_the_same_spec(tmp_path):
    """``bnma cv --data wbc --missing drop --sep , --drop bare_nuclei`` and the Data page's
    link with the same choices name the same dataset."""
    from bnma_core.cli import build_parser, data_spec

    args = build_parser().parse_args(["cv", "--data", "wbc", "--missing", "drop", "--sep", ",",
                                      "--drop", "bare_nuclei", "--target", "class"])
    cli = data_spec(args, discretization=args.discretization, bins=args.n_bins)
    page, problems = DatasetSpec.from_query_params(
        {"src": "bundled", "file": "wbc.csv", "target": "class", "missing": "drop",
         "sep": "comma", "drop": "bare_nuclei", "disc": "median", "bins": "3"})
    assert problems == [] and cli == page
    assert cli.build().fingerprint() == page.build().fingerprint()
    with pytest.raises(DataError, match="File not found: nosuch"):
        DatasetSpec.from_data_argument("nosuch")
    csv = tmp_path / "mine.csv"
    csv.write_bytes(bundled_path("wbc.csv").read_bytes())
    assert DatasetSpec.from_data_argument(str(csv)).source == "path"


def test_pages_are_ordered_by_their_number(tmp_path):
    from bnma_ui.widgets import DATA_PAGE, page_files

    for name in ("10_Late.py", "2_Second.py", "1_First.py", "0_Data.py", "9_Glossary.py",
                 "notes.py"):
        (tmp_path / name).write_text("")
    assert page_files(tmp_path) == ["pages/0_Data.py", "pages/1_First.py", "pages/2_Second.py",
                                    "pages/9_Glossary.py", "pages/10_Late.py"]
    assert page_files()[0] == DATA_PAGE
