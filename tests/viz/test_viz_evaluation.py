"""Figures of the Compare page: interval bars (readable labels, intervals on the metric's own
scale, partial results greyed) and ROC small multiples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bnma_core import viz
from bnma_core.viz.evaluation import PARTIAL_COLOUR


def _table():
    return pd.DataFrame({"method": ["nb", "tan", "bma10"],
                         "log_loss": [0.25, 0.12, 0.02], "log_loss_lower": [0.14, 0.08, 0.005],
                         "log_loss_upper": [0.39, 0.16, 0.06],
                         "accuracy": [0.97, 0.96, 0.99], "accuracy_lower": [0.95, 0.94, 0.98],
                         "accuracy_upper": [0.98, 0.97, 1.0]})


def test_interval_dots_with_names_on_the_side_and_labels_outside_the_whiskers():
    fig = viz.interval_bar_figure(_table(), "log_loss",
                                  labels={"nb": "Naive Bayes (nb)"},
                                  partial={"bma10": "1 of 10 folds"})
    bar, text = fig.data
    assert bar.type == "scatter" and bar.mode == "markers"  # a dot plot (issue 33 item 6)
    assert list(bar.y) == ["Naive Bayes (nb)", "tan", "bma10 — 1 of 10 folds"]
    # asymmetric whiskers from the interval: a log-loss never drawn below 0
    np.testing.assert_allclose(np.asarray(bar.x) - np.asarray(bar.error_x.arrayminus),
                               [0.14, 0.08, 0.005])
    np.testing.assert_allclose(np.asarray(bar.x) + np.asarray(bar.error_x.array),
                               [0.39, 0.16, 0.06])
    assert fig.layout.xaxis.range[0] >= 0
    # each value written right of its interval's upper end: no whisker crosses it
    np.testing.assert_allclose(text.x, [0.39, 0.16, 0.06])
    assert text.textposition == "middle right" and text.text[0].strip() == "0.250"
    assert fig.layout.xaxis.range[1] > max(text.x)  # room for the labels
    # the partial method is grey, the others not
    assert list(bar.marker.color) == [bar.marker.color[0], bar.marker.color[0], PARTIAL_COLOUR]
    assert bar.marker.color[0] != PARTIAL_COLOUR
    assert "lower is better" in fig.layout.xaxis.title.text


def test_interval_bars_of_a_proportion_end_near_1_and_refuse_a_table_without_intervals():
    fig = viz.interval_bar_figure(_table(), "accuracy")
    assert fig.layout.xaxis.range[1] == 1.0  # a proportion's axis ends at 1
    assert fig.layout.margin.r >= 60 and fig.data[1].cliponaxis is False  # labels past it
    assert fig.layout.title.text.startswith("Accuracy by method (pooled")
    # a dot plot may zoom, and says so (issue 33 item 6)
    assert fig.layout.xaxis.range[0] > 0.5 and fig.data[0].mode == "markers"
    assert "the axis does not start at 0" in fig.layout.xaxis.title.text


def test_bars_of_a_proportion_start_at_zero():
    """issue 33 item 6: the bars started at about 0.92, so 0.948 looked like half of 0.971."""
    summary = pd.DataFrame({"method": ["a", "b"], "accuracy_mean": [0.948, 0.971],
                            "accuracy_std": [0.01, 0.01]})
    fig = viz.accuracy_bar_figure(summary)
    assert fig.layout.yaxis.range[0] == 0.0
    with pytest.raises(ValueError, match="no 'brier' column"):
        viz.interval_bar_figure(_table(), "brier")


def test_roc_small_multiples_one_panel_per_method_with_pooled_auc():
    curves = {f"m{i}": {"fpr": [0, 0.1 * i, 1], "tpr": [0, 0.9, 1], "auc": 0.9 - 0.01 * i}
              for i in range(9)}
    fig = viz.roc_small_multiples(curves, labels={"m0": "Naive Bayes (nb)"}, columns=3)
    titles = [a.text for a in fig.layout.annotations]
    assert len(titles) == 9 and titles[0] == "Naive Bayes (nb)<br>pooled AUC 0.900"
    # per panel: the diagonal, the 8 others faint, the method itself
    assert len(fig.data) == 9 * (1 + 8 + 1)
    own = [t for t in fig.data if t.showlegend is False and t.line.width == 2.5]
    assert len(own) == 9 and len({t.line.color for t in own}) == 9
    assert fig.layout.height >= 3 * 300


def test_roc_legend_says_which_auc():
    fig = viz.roc_figure({"nb": ([0, 0.2, 1], [0, 0.8, 1], 0.8)}, auc_label="pooled AUC")
    assert fig.data[1].name == "nb (pooled AUC 0.800)"


def test_roc_legend_wraps_long_names_inside_the_plot():
    name = "Stacking of order-MCMC averaging (three priors) and UKDB (stack) — 1 of 10 folds"
    fig = viz.roc_figure({name: ([0, 0.2, 1], [0, 0.8, 1], 0.8)}, auc_label="pooled AUC")
    lines = fig.data[1].name.split("<br>")
    assert len(lines) > 1 and max(map(len, lines)) <= 48
    assert " ".join(lines) == f"{name} (pooled AUC 0.800)"
