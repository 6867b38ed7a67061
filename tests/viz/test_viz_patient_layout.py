"""The Patient figures keep every label whole when drawn as static images (issue 33 item 1):
margins computed from the labels they hold, the legend above the plot (never over the x-axis
title). The drawn geometry is checked in a browser by tests/browser/test_print_geometry.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bnma_core.viz import patient as viz
from bnma_core.viz.graphs import label_width

LONG_CLASSES = np.array(["benign", "malignant carcinoma, stage II"])


def _prediction(n_rows: int = 1):
    p = np.tile([[0.15, 0.85]], (n_rows, 1))
    si = np.stack([p - 0.1, np.minimum(p + 0.1, 1)], axis=-1)
    return SimpleNamespace(classes=LONG_CLASSES, proba=p, structure_interval=si,
                           parameter_interval=si, level=0.9, predicted=p.argmax(1))


def _shapley(names):
    k = len(names)
    return SimpleNamespace(target=1, names=list(names), values=np.linspace(1.0, -0.5, k),
                           empty=-0.6, full=-0.6 + float(np.linspace(1.0, -0.5, k).sum()),
                           model_sd=np.full(k, 0.2))


def test_probability_figure_left_margin_fits_the_longest_class_name():
    fig = viz.probability_figure(_prediction())
    widest = max(label_width(c, viz.FONT_SIZE) for c in LONG_CLASSES)
    assert fig.layout.margin.l >= widest
    assert fig.layout.yaxis.automargin and fig.layout.xaxis.automargin


def test_contributions_figure_margin_fits_every_finding_and_legend_sits_above():
    names = ["clump_thickness", "a_much_longer_finding_name_here", "mitoses"]
    values = {"clump_thickness": "7", "a_much_longer_finding_name_here": "2", "mitoses": None}
    fig = viz.contributions_figure(_shapley(names), values, LONG_CLASSES, row_height=18)
    widest = max(label_width(y, viz.FONT_SIZE) for y in fig.data[0].y)
    assert fig.layout.margin.l >= widest
    # the legend is above the plot area (paper y >= 1), so it cannot cover the x-axis title
    assert fig.layout.legend.yanchor == "bottom" and fig.layout.legend.y >= 1
    assert fig.layout.margin.t >= 30  # room for the legend's row(s)
    assert fig.layout.margin.b >= 40  # tick labels and the axis title


@pytest.mark.parametrize("width, rows", [(400, 2), (2000, 1)])
def test_label_margins_counts_the_legend_rows(width, rows):
    names = ["spread across the averaged models (± 1 sd)", "supports malignant",
             "speaks against malignant"]
    m = viz.label_margins(["x"], names, width=width)
    assert m["t"] == 10 + 22 * rows
