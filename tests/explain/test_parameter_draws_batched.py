"""Parameter draws (DESIGN §15): a structure's Dirichlet rows are drawn by one gamma call for
all its families, and the used CPT rows found by a mask; the draws must be those of the
family-by-family version (``np.unique`` of the rows' CPT indices, one ``_dirichlet`` call per
family), to the byte, so an interval does not move."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core.explain.parameters import _complete_log_joint, _dirichlet, _Net, _unique_rows


def _family_by_family(net, ar, codes, families, k, rng):
    """The draws as they were made before: one family at a time."""
    t = codes.shape[1] - 1
    C = int(ar[t])
    X3 = np.repeat(codes[:, None, :], C, axis=1)
    X3[:, :, t] = np.arange(C)[None, :]
    acc = np.zeros((k,) + X3.shape[:2])
    for i in families:
        pa, conc = net.parents[i], net.conc[i]
        j = np.zeros(X3.shape[:2], dtype=np.int64)
        stride = 1
        for u in pa:
            j += X3[:, :, u] * stride
            stride *= int(ar[u])
        used, inv = np.unique(j, return_inverse=True)
        theta = _dirichlet(rng, np.broadcast_to(conc[used], (k,) + conc[used].shape))
        acc += np.log(theta[:, inv.reshape(j.shape), X3[:, :, i]])
    return acc


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_one_gamma_call_gives_the_family_by_family_draws(data):
    p = data.draw(st.integers(1, 5), label="features")
    ar = np.array(data.draw(st.lists(st.integers(2, 4), min_size=p + 1, max_size=p + 1)),
                  dtype=np.int64)
    seed = data.draw(st.integers(0, 2 ** 16), label="seed")
    g = np.random.default_rng(seed)
    parents = []
    for v in range(p + 1):  # parents among the earlier variables (the class last)
        parents.append([u for u in range(v) if g.random() < 0.5])
    conc = [g.uniform(0.05, 20.0, size=(int(np.prod(ar[pa])) if pa else 1, int(ar[v])))
            for v, pa in enumerate(parents)]
    net = _Net(parents, conc)
    n = data.draw(st.integers(1, 6), label="rows")
    codes = np.column_stack([g.integers(0, ar[:p], size=(n, p)), np.full(n, -1)])
    families = np.flatnonzero(g.random(p + 1) < 0.8)
    k = data.draw(st.integers(1, 7), label="draws")
    got = _complete_log_joint(net, ar, codes, families, k, np.random.default_rng(seed + 1))
    ref = _family_by_family(net, ar, codes, families, k, np.random.default_rng(seed + 1))
    np.testing.assert_array_equal(got, ref)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(bases=st.lists(st.integers(1, 40), min_size=1, max_size=12), k=st.integers(1, 60),
       seed=st.integers(0, 2 ** 16))
def test_drawn_structures_grouped_as_numpy_does(bases, k, seed):
    """The drawn parent-set indices grouped into structures in np.unique(axis=0)'s order
    (the order the structures' CPTs are then drawn in)."""
    g = np.random.default_rng(seed)
    idx = np.column_stack([g.integers(0, b, size=k) for b in bases])
    picks, counts = _unique_rows(idx, bases)
    ref_picks, ref_counts = np.unique(idx, axis=0, return_counts=True)
    np.testing.assert_array_equal(picks, ref_picks)
    np.testing.assert_array_equal(counts, ref_counts)
