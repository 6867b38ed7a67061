"""The rising-factorial terms of the Dirichlet-multinomial score read from cached tables
(``kernels.counting.log_rising``, issue 34): equal to lgamma(a + c) - lgamma(a) for every
count and hyperparameter, whatever the order of the requests and however the cache's slots
collide; the family log-ML that reads them equals its lgamma form for integer and fractional
counts."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from bnma_core.kernels.counting import (
    LOG_RISING_CUTOFF,
    log_gamma_large,
    log_ml_uniform_alpha,
    log_ml_uniform_alpha_cached,
    log_rising,
    rising_cache,
)

_A = st.floats(1e-4, 50.0, allow_nan=False)
_log_gamma_large = njit(lambda x: log_gamma_large(x))
_C = st.one_of(st.integers(0, LOG_RISING_CUTOFF + 2), st.integers(0, 4000))


def _lgamma_form(a, c):
    return math.lgamma(a + c) - math.lgamma(a)


@settings(max_examples=60, deadline=None)
@given(pool=st.lists(_A, min_size=1, max_size=5),
       requests=st.lists(st.tuples(st.integers(0, 4), _C), min_size=1, max_size=200),
       slots=st.sampled_from([1, 2, 256]))
def test_log_rising_equals_lgamma_whatever_the_history(pool, requests, slots):
    """Requests in any order over a few values of a (one slot: every change of a evicts): each
    equals the lgamma form to 1e-12 and, exactly, what a fresh cache gives (the value depends
    on (a, c) only, so tables scored for several priors at once equal separate builds)."""
    rc = rising_cache(slots)
    for i, c in requests:
        a = pool[i % len(pool)]
        got = log_rising(rc, a, c)
        assert got == pytest.approx(_lgamma_form(a, c), rel=1e-12, abs=1e-12)
        assert got == log_rising(rising_cache(1), a, c)


def test_log_rising_table_end():
    """Counts read from the table as far as the cutoff, lgamma beyond it."""
    rc = rising_cache(2)
    a = 1.0 / 81
    for c in [1, 3, 2, 40, 10, 25, 64, 65, 3000, 0, 64]:
        assert log_rising(rc, a, c) == pytest.approx(_lgamma_form(a, c), rel=1e-12, abs=1e-12)
    assert rc.built.max() == LOG_RISING_CUTOFF


@settings(max_examples=60, deadline=None)
@given(q=st.integers(1, 6), r=st.integers(1, 4), a=_A, seed=st.integers(0, 10_000),
       fractional=st.booleans())
def test_family_log_ml_equals_lgamma_form(q, r, a, seed, fractional):
    rng = np.random.default_rng(seed)
    counts = rng.poisson(rng.choice([0.5, 5.0, 80.0]), size=(q, r)).astype(float)
    if fractional:
        counts *= 0.37
    ref = 0.0
    for j in range(q):
        n_j = counts[j].sum()
        if n_j:
            ref += math.lgamma(a * r) - math.lgamma(a * r + n_j)
        ref += sum(_lgamma_form(a, c) for c in counts[j] if c)
    got = log_ml_uniform_alpha(counts, a)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-11)
    assert log_ml_uniform_alpha_cached(counts, a, rising_cache(256)) == got
    assert log_ml_uniform_alpha_cached(counts, a, rising_cache(1)) == got  # a, a r: one slot


@settings(max_examples=200, deadline=None)
@given(x=st.one_of(st.floats(LOG_RISING_CUTOFF, 200.0), st.floats(200.0, 1e12)))
def test_stirling_series_equals_lgamma_beyond_the_table(x):
    """Counts beyond the tables take lgamma by Stirling's series (``log_gamma_large``): equal
    to ``math.lgamma`` to 1e-14 relative from the cutoff on."""
    got = _log_gamma_large(x)
    assert got == pytest.approx(math.lgamma(x), rel=1e-14, abs=0)
