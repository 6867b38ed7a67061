"""Explaining one case under the averaged model (DESIGN §15).

* :func:`predict_with_uncertainty` — the averaged probability with the structure interval
  (over the averaged models) and the structure + parameter interval (Dirichlet draws);
* :func:`shapley_values` — exact (≤ 16 findings) or sampled Shapley values of the predicted
  class's log-odds, leaving a finding out = marginalising it;
* :func:`what_if` — findings changed, added or cleared, up to three scenarios;
* :func:`next_test` — value of information of each unobserved finding and the chance that
  observing it flips the decision;
* :func:`unusual_case` — Jensen's conflict measure and the case's likelihood percentile among
  the training cases;
* :func:`plan_explanation` — each part sized from its shape against the per-request budget
  before it runs (DESIGN §15, Budget): in full, cheaper with a sentence, or refused.

Every function takes a fitted estimator and rows as ``predict_proba`` does (missing values
allowed). The models behind an average come from the estimator's ``model_log_joints``; a
stack's are its components' models, flattened (:class:`Part`).
"""

from .budget import ExplanationPlan, PartPlan, plan_explanation
from .findings import NextTest, Scenario, Unusual, next_test, scenario_codes, unusual_case, what_if
from .models import ModelSet, Part, defines_joint, model_set, weighted_quantile
from .parameters import DrawResult, parameter_draws
from .shapley import ShapleyResult, shapley_values
from .uncertainty import LEVEL, Prediction, predict_with_uncertainty

__all__ = ["LEVEL", "DrawResult", "ExplanationPlan", "ModelSet", "NextTest", "Part",
           "PartPlan", "Prediction", "Scenario", "ShapleyResult", "Unusual", "defines_joint",
           "model_set", "next_test", "parameter_draws", "plan_explanation",
           "predict_with_uncertainty", "scenario_codes", "shapley_values", "unusual_case",
           "weighted_quantile", "what_if"]
