"""Paper-regime score tables counted over suffix groups of the distinct rows (numba).

Every variable set V = {v_1 < ... < v_k} with k <= l + 1 needs its joint contingency table
(DESIGN §9: the |V| families "v given V minus v" are scored from it). Counting each table by a
pass over the U distinct data rows costs U per set (74,000 sets on ALARM with l = 3; 26.8 CPU s at
N = 1,000,000, U = 241,729). Here the sets are enumerated depth-first as before, but each set S
with largest member m carries its rows *compressed*: one entry per distinct pair
(values of the columns > m, joint cell of S), weighted by the number of rows. Extending S by
v > m only needs the value of v, which is constant on each entry (v > m is one of the kept
columns), so the extension reads one entry instead of every row, and entries that agree on the
columns > v merge. With the rows sorted by their values read from the last column backwards,
rows that agree on the columns > c are contiguous for every c (a *suffix group*), so the merge
is a run over a small histogram. The counts are the same integers as one pass over all rows
(tested against :func:`bnma_core.kernels.orders.build_full_table`); the family scores come from
the same functions (:func:`bnma_core.kernels.orders._score_set`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .counting import RISING_SLOTS, rising_cache
from .orders import _score_set, log_factorials


@njit(cache=True)
def suffix_groups(data_t: np.ndarray) -> np.ndarray:
    """gid[c, r] = index of row r's suffix group at threshold c: rows r, r' share a group iff
    they agree on every column > c. ``data_t`` (n, U) must be sorted so that such rows are
    contiguous (:func:`bnma_core.structure.score_table.suffix_sort`). Returns (n, U) int32;
    gid[n - 1] is all zero."""
    n, u = data_t.shape
    gid = np.zeros((n, u), dtype=np.int32)
    if u == 0:
        return gid
    # boundary[r] = True when row r differs from row r - 1 on some column > c (built from the top)
    boundary = np.zeros(u, dtype=np.bool_)
    for c in range(n - 1, -1, -1):
        g = 0
        gid[c, 0] = 0
        for r in range(1, u):
            if boundary[r]:
                g += 1
            gid[c, r] = g
        # column c joins the suffix of threshold c - 1
        row_c = data_t[c]
        for r in range(1, u):
            if row_c[r] != row_c[r - 1]:
                boundary[r] = True
    return gid


@njit(cache=True)
def _extend(rep: np.ndarray, cell: np.ndarray, w: np.ndarray, n_in: int, row_v: np.ndarray,
            gid_v: np.ndarray, st: int, table: np.ndarray, touched: np.ndarray,
            hist: np.ndarray, htouch: np.ndarray, out_rep: np.ndarray, out_cell: np.ndarray,
            out_w: np.ndarray, build: bool) -> tuple[int, int, int]:
    """Add variable v (values ``row_v``, stride ``st``) to a set given by its entries; count the
    new set's joint table into ``table`` (non-zero cells listed in ``touched``) and, when
    ``build``, write its entries merged per suffix group at threshold v. Returns (cells
    touched, rows complete on the new set, entries written)."""
    n_touched = 0
    n_complete = 0
    n_out = 0
    if not build:
        for e in range(n_in):
            x = row_v[rep[e]]
            if x >= 0:
                p = cell[e] + x * st
                if table[p] == 0:
                    touched[n_touched] = p
                    n_touched += 1
                table[p] += w[e]
                n_complete += w[e]
        return n_touched, n_complete, 0
    prev_g = -1
    prev_rep = 0
    n_h = 0
    for e in range(n_in):
        r = rep[e]
        x = row_v[r]
        if x < 0:
            continue
        g = gid_v[r]
        if g != prev_g:
            for h in range(n_h):  # flush the group: its entries, and their sum into the table
                c = htouch[h]
                hc = hist[c]
                out_rep[n_out] = prev_rep
                out_cell[n_out] = c
                out_w[n_out] = hc
                n_out += 1
                hist[c] = 0
                if table[c] == 0:
                    touched[n_touched] = c
                    n_touched += 1
                table[c] += hc
            n_h = 0
            prev_g = g
            prev_rep = r
        p = cell[e] + x * st
        we = w[e]
        if hist[p] == 0:
            htouch[n_h] = p
            n_h += 1
        hist[p] += we
        n_complete += we
    for h in range(n_h):
        c = htouch[h]
        hc = hist[c]
        out_rep[n_out] = prev_rep
        out_cell[n_out] = c
        out_w[n_out] = hc
        n_out += 1
        hist[c] = 0
        if table[c] == 0:
            touched[n_touched] = c
            n_touched += 1
        table[c] += hc
    return n_touched, n_complete, n_out


@njit(cache=True)
def _leaf_tables(rep: np.ndarray, cell: np.ndarray, w: np.ndarray, n_in: int,
                 data: np.ndarray, first: int, st: int, tabs: np.ndarray) -> None:
    """Joint tables of S + {j} for every j >= ``first`` at once, S given by its entries:
    ``tabs[j, cell + x_j * st] += w`` (one read of each entry for all j; ``data`` row-major
    (U, n))."""
    n = data.shape[1]
    for e in range(n_in):
        row = data[rep[e]]
        p = cell[e]
        we = w[e]
        for j in range(first, n):
            x = row[j]
            if x >= 0:
                tabs[j, p + x * st] += we


def build_full_table_grouped(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                             max_parents: int, log_prior: np.ndarray, score_kind: int,
                             ess: float, n_sets: int, max_cells: int
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Local scores of every family with at most ``max_parents`` parents (the paper regime),
    counted over suffix groups (module docstring). Same arguments and result as
    :func:`bnma_core.kernels.orders.build_full_table`: ``data_t`` (n, U) the distinct rows
    (sorted by :func:`bnma_core.structure.score_table.suffix_sort`), ``weights`` (U,) int64
    their multiplicities; returns unsorted ``masks`` (n, n_sets) uint64 and ``scores``
    (n, n_sets) float64, the sets of each node in the same depth-first order. One prior of
    :func:`build_full_tables_grouped`."""
    masks, scores = build_full_tables_grouped(
        data_t, weights, arities, max_parents, log_prior, np.array([score_kind], np.int64),
        np.array([ess], np.float64), n_sets, max_cells)
    return masks, scores[0]


@njit(cache=True)
def build_full_tables_grouped(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                              max_parents: int, log_prior: np.ndarray,
                              score_kinds: np.ndarray, esses: np.ndarray, n_sets: int,
                              max_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`build_full_table_grouped` for P Dirichlet priors (``score_kinds[q]``,
    ``esses[q]``) from one counting pass: each joint table is counted once and its families
    scored under every prior (the three priors of ``stack``, DESIGN §9). Returns ``masks``
    (n, n_sets), the same for every prior, and ``scores`` (P, n, n_sets)."""
    n, u = data_t.shape
    n_rows = 0
    for r_ in range(u):
        n_rows += weights[r_]
    L = max_parents + 1
    gid = suffix_groups(data_t)
    n_p = score_kinds.shape[0]
    masks = np.zeros((n, n_sets), dtype=np.uint64)
    scores = np.full((n_p, n, n_sets), -np.inf)
    fill = np.zeros((n_p, n), dtype=np.int64)
    lfact = log_factorials(n_rows + 2 + int(arities.max()))
    comb = np.zeros(L, dtype=np.int64)
    stride = np.ones(L + 1, dtype=np.int64)
    # entries of the set at each depth; depth 0 = the empty set: every distinct row, cell 0
    reps = np.empty((L + 1, u), dtype=np.int32)
    cells = np.zeros((L + 1, u), dtype=np.int32)
    ws = np.empty((L + 1, u), dtype=np.int64)
    n_ent = np.zeros(L + 1, dtype=np.int64)
    for r_ in range(u):
        reps[0, r_] = r_
        ws[0, r_] = weights[r_]
    n_ent[0] = u
    table = np.zeros(max_cells, dtype=np.int64)
    touched = np.empty(max_cells, dtype=np.int64)
    hist = np.zeros(max_cells, dtype=np.int64)
    htouch = np.empty(max_cells, dtype=np.int64)
    nj = np.zeros(max_cells, dtype=np.int64)
    totals = np.empty(max_cells, dtype=np.int64)
    cterms = np.empty(n_p)
    cfit = np.empty(n_p)
    chist = np.zeros(n_rows + 1, dtype=np.int64)
    cvals = np.empty(min(max_cells, n_rows + 1), dtype=np.int64)
    rc = rising_cache(RISING_SLOTS)
    data = np.ascontiguousarray(data_t.T)
    tabs = np.zeros((n, max_cells), dtype=np.int64)
    members = np.empty(L, dtype=np.int64)
    t = 0
    comb[0] = 0
    while t >= 0:
        if comb[t] >= n:
            t -= 1
            if t >= 0:
                comb[t] += 1
            continue
        v = comb[t]
        descend = t + 1 < L and v + 1 < n
        n_touched, n_complete, n_out = _extend(
            reps[t], cells[t], ws[t], n_ent[t], data_t[v], gid[v], stride[t], table, touched,
            hist, htouch, reps[t + 1], cells[t + 1], ws[t + 1], descend)
        n_ent[t + 1] = n_out
        size = stride[t] * arities[v]
        stride[t + 1] = size
        sparse = 2 * n_touched < size
        _score_set(comb[: t + 1], stride, table, touched, n_touched, n_complete, n_rows, size,
                   sparse, arities, log_prior[t], score_kinds, esses, lfact, nj, totals, cterms,
                   cfit, chist, cvals, rc, masks, scores, fill)
        for c in range(n_touched):
            table[touched[c]] = 0
        if descend and t + 2 == L:
            # the next sets are the largest: count all of them from these entries at once
            _leaf_tables(reps[t + 1], cells[t + 1], ws[t + 1], n_out, data, v + 1, size, tabs)
            for s_ in range(t + 1):
                members[s_] = comb[s_]
            for j in range(v + 1, n):
                members[t + 1] = j
                leaf_size = size * arities[j]
                stride[t + 2] = leaf_size
                done = 0
                n_leaf = 0
                for c in range(leaf_size):
                    x = tabs[j, c]
                    if x != 0:
                        touched[n_leaf] = c
                        n_leaf += 1
                        done += x
                # fewer non-zero cells than half the table: score them only (as _extend's sets)
                sparse = 2 * n_leaf < leaf_size
                _score_set(members, stride, tabs[j], touched, n_leaf, done, n_rows,
                           leaf_size, sparse, arities, log_prior[t + 1], score_kinds, esses,
                           lfact, nj, totals, cterms, cfit, chist, cvals, rc, masks, scores, fill)
                for c in range(n_leaf):
                    tabs[j, touched[c]] = 0
            comb[t] += 1
        elif descend:
            t += 1
            comb[t] = comb[t - 1] + 1
        else:
            comb[t] += 1
    return masks, scores
