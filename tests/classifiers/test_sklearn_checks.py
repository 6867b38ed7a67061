"""scikit-learn's estimator checks on every registered classifier (issue 10 item 9).

Each registry entry is built with its small ``test_params`` (few MCMC iterations, one parent)
so the whole contract runs in seconds. Entries that build the same estimator (``kdb`` and
``kdb2``, ``ukdb`` and ``ukdb2``) are checked once. Checks that cannot apply to an estimator
are expected failures, each with its reason (:data:`EXPECTED_FAILURES`); with scikit-learn
1.9.1 only the exact-search limit applies: continuous inputs are discretized at the training
median (``DiscreteEncoder``), NaN is a missing value, strings are categories. The only check not
run is ``check_array_api_input``, which scikit-learn itself skips unless ``SCIPY_ARRAY_API`` is
set. Measured: 637 checks, about 32 s on one core.
"""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from bnma_core.classifiers.registry import METHODS


def _estimators():
    seen, out = set(), []
    for spec in METHODS.values():
        params = {**spec.defaults, **spec.test_params}
        key = (spec.factory, tuple(sorted(params.items())))
        if key in seen:
            continue
        seen.add(key)
        extra = {"random_state": 0} if spec.randomized else {}
        out.append(spec.make(**spec.test_params, **extra))
    return out


ESTIMATORS = _estimators()

_OVER_EXACT_LIMIT = ("the check fits 30 features; exact structure search refuses more than 20 "
                     "variables (issue 11's limit, a plain ResourceLimitError)")
EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "ExactBN": {"check_sample_weight_equivalence_on_dense_data": _OVER_EXACT_LIMIT},
    "ExactANB": {"check_sample_weight_equivalence_on_dense_data": _OVER_EXACT_LIMIT},
}
"""{estimator class name: {check name: reason}} (strict xfail would flag an entry whose check
starts to pass)."""


def expected_failed_checks(estimator) -> dict[str, str]:
    return EXPECTED_FAILURES.get(type(estimator).__name__, {})


def test_every_registered_method_is_checked():
    classes = {spec.factory.split(":")[1] for spec in METHODS.values()}
    assert {type(e).__name__ for e in ESTIMATORS} == classes


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_contract(estimator, check):
    check(estimator)
