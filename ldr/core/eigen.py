"""Extreme eigenvectors, ordinary and generalized, as the eigenvector recipes and SCF need them.

One computation each, written against the array API (:func:`top_by_whitening`: the
generalized problem through two symmetric ``eigh``).  NumPy pencils go to SciPy's LAPACK
driver for the generalized problem restricted to the top r + 1 pairs (``scipy.linalg.eigh``
with ``subset_by_index``), which the array API lacks: the one dispatch here, for the d×d
pencil of every SCF iteration.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ldr.data import arrays
from ldr.manifolds import orthonormalize


def top_eigenvectors(A, r: int):
    """The r eigenvectors of the symmetric matrix ``A`` with the largest eigenvalues, as the
    columns of a d×r array in decreasing order of eigenvalue (in A's namespace and on its
    device)."""
    d = A.shape[0]
    V = arrays.eigh(A)[1][:, d - r:]
    xp = arrays.namespace(V)
    return xp.asarray(xp.flip(V, axis=1), copy=True)


def top_generalized(A, B, r: int) -> tuple:
    """``(M, w)``: an orthonormal basis M of the r generalized eigenvectors of (A, B) with the
    largest eigenvalues (B positive definite), and the r + 1 largest eigenvalues, decreasing
    (the (r+1)-th gives the eigengap), in the namespace and on the device of A and B.  NumPy:
    SciPy's generalized subset solve, or :func:`top_by_whitening` where LAPACK's Cholesky of
    B fails or its answer is not finite; other namespaces: :func:`top_by_whitening`."""
    d = A.shape[0]
    w = V = None
    # SciPy's subset solve of the pencil at large d
    # benchmark: benchmarks/bench_wda_scale.py
    if arrays.numpy_fast_path(A, B):
        try:
            w, V = scipy.linalg.eigh(A, B, subset_by_index=[max(d - r - 1, 0), d - 1])
        except np.linalg.LinAlgError:  # B positive definite only up to rounding
            V = None
        if V is not None and (V.shape[1] < min(r + 1, d) or not (
                np.all(np.isfinite(w)) and np.all(np.isfinite(V)))):
            V = None
    if V is None:
        w, V = top_by_whitening(A, B, r)
    xp = arrays.namespace(V)
    return orthonormalize(xp.flip(V, axis=1)[:, :r]), xp.flip(w, axis=0)


def top_by_whitening(A, B, r: int) -> tuple:
    """The r + 1 top eigenpairs ``(w, V)`` of the pencil (A, B), increasing, through
    B = QΛQᵀ with Λ floored at d·ε·λ_max (a B singular to rounding, e.g. a scatter that
    collapsed along a direction, gets the floor along those directions):
    C = Λ^{-1/2}QᵀAQΛ^{-1/2} = UΩUᵀ, V = QΛ^{-1/2}U — two d×d symmetric ``eigh``."""
    xp = arrays.namespace(A)
    d = A.shape[0]
    lam, Q = arrays.eigh(0.5 * (B + B.T))
    top = arrays.max_abs(lam)
    floor = max(d * arrays.eps(B) * top, float(xp.finfo(B.dtype).smallest_normal))
    T = Q / xp.sqrt(xp.clip(lam, min=floor))
    C = T.T @ A @ T
    w, U = arrays.eigh(0.5 * (C + C.T))
    k = min(r + 1, d)
    return w[d - k:], T @ U[:, d - k:]
