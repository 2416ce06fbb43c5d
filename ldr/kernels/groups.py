"""Groups of equal rows: the samples that share a class, found without sorting the rows.

A factor F of Γ whose columns take few values (one-hot class columns, centered or scaled)
makes Γ constant on the tiles of sample groups: the HSIC sums then run per group instead of
per sample (:mod:`ldr.kernels.tiles`, :mod:`ldr.kernels.features`).  The groups are found in
O(n) a column: each column's values are coded by a lookup in its first rows
(:func:`value_codes`), and the codes are combined into one integer key a row
(:func:`code_groups`), numbered in the rows' lexicographic order — the order
``np.unique(F, axis=0)`` gives, without its sort of n rows of floats.
"""

from __future__ import annotations

import numpy as np

__all__ = ["code_groups", "value_codes"]


def value_codes(column: np.ndarray, cap: int):
    """``(codes, v)``: the index of each entry among the column's v distinct values (sorted),
    or None when it has more than ``cap`` of them.  The values are read from the first
    cap + 1 entries and every entry is looked up there (O(n·log cap), no sort of the column);
    only when some entry is not among them is the whole column sorted."""
    head = np.unique(column[:cap + 1])
    if head.shape[0] > cap:
        return None
    codes = np.minimum(np.searchsorted(head, column), head.shape[0] - 1)
    if np.array_equal(head[codes], column):
        return codes, head.shape[0]
    values, codes = np.unique(column, return_inverse=True)
    if values.shape[0] > cap:
        return None
    return codes.reshape(-1), values.shape[0]


def code_groups(coded, n: int, cap: int):
    """``(gid, first)``: the group of each of the n rows whose columns have the value codes
    ``coded`` (a list of :func:`value_codes` results, the first column most significant), the
    groups numbered in the rows' lexicographic order, and ``first`` one row of each group; None
    when there are more than ``cap`` groups."""
    key = np.zeros(n, dtype=np.int64)
    size = 1  # the keys lie in [0, size)
    for codes, v in coded:
        if size * v > 2**62:  # renumber the keys so far (in order) before they overflow
            uniq, key = np.unique(key, return_inverse=True)
            key = key.reshape(-1).astype(np.int64)
            size = uniq.shape[0]
        key = key * v + codes
        size *= v
    if size <= 4 * n:
        present = np.flatnonzero(np.bincount(key, minlength=size))
        if present.shape[0] > cap:
            return None
        lookup = np.empty(size, dtype=np.int64)
        lookup[present] = np.arange(present.shape[0])
        gid = lookup[key]
    else:
        present, gid = np.unique(key, return_inverse=True)
        if present.shape[0] > cap:
            return None
        gid = gid.reshape(-1)
    first = np.empty(present.shape[0], dtype=np.int64)
    first[gid] = np.arange(n)  # a row of each group (its rows agree on the coded columns)
    return gid, first
