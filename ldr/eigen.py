"""Extreme generalized eigenvectors, as the eigenvector recipes and SCF need them."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ldr.data import arrays
from ldr.manifolds import orthonormalize


def top_generalized(A: np.ndarray, B: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M, w)``: an orthonormal basis M of the r generalized eigenvectors of (A, B) with the
    largest eigenvalues (B positive definite), and the r + 1 largest eigenvalues, decreasing
    (the (r+1)-th gives the eigengap).  A and B of another namespace (PyTorch, CuPy, ...):
    computed there by :func:`_top_in_namespace`."""
    if type(A) is not np.ndarray and arrays.foreign(A) is not None:
        return _top_in_namespace(A, B, r)
    d = A.shape[0]
    try:
        w, V = scipy.linalg.eigh(A, B, subset_by_index=[max(d - r - 1, 0), d - 1])
    except np.linalg.LinAlgError:  # B positive definite only up to rounding
        w, V = np.zeros(0), np.zeros((d, 0))
    if V.shape[1] < min(r + 1, d) or not (np.all(np.isfinite(w)) and np.all(np.isfinite(V))):
        w, V = _top_by_whitening(A, B, r)
    w, V = w[::-1], V[:, ::-1]
    return orthonormalize(V[:, :r]), w


def _top_by_whitening(A: np.ndarray, B: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """The r + 1 top eigenpairs (increasing) of (A, B) through B = QΛQᵀ with Λ floored at
    d·ε·λ_max — for a B that LAPACK's Cholesky refuses (singular to rounding, e.g. a scatter
    that collapsed along a direction): the pencil (A, B + the floor along those directions)."""
    d = A.shape[0]
    lam, Q = scipy.linalg.eigh(0.5 * (B + B.T))
    top = float(np.max(np.abs(lam))) if lam.size else 0.0
    lam = np.maximum(lam, max(d * np.finfo(float).eps * top, np.finfo(float).tiny))
    T = Q / np.sqrt(lam)  # B^{-1/2} up to the rotation Q
    C = T.T @ A @ T
    w, U = scipy.linalg.eigh(0.5 * (C + C.T), subset_by_index=[max(d - r - 1, 0), d - 1])
    return w, T @ U


def _top_in_namespace(A, B, r: int):
    """:func:`top_generalized` in the namespace and on the device of A and B, by the
    whitening of :func:`_top_by_whitening` (two d×d ``eigh``: the array API has no
    generalized one): B = QΛQᵀ, Λ floored at d·ε·λ_max, C = Λ^{-1/2}QᵀAQΛ^{-1/2}."""
    xp = arrays.namespace(A)
    d = A.shape[0]
    lam, Q = xp.linalg.eigh(0.5 * (B + B.T))
    top = arrays.max_abs(lam)
    floor = max(d * arrays.eps(B) * top, float(xp.finfo(B.dtype).smallest_normal))
    T = Q / xp.sqrt(xp.clip(lam, min=floor))
    C = T.T @ A @ T
    w, U = xp.linalg.eigh(0.5 * (C + C.T))
    k = min(r + 1, d)
    w, V = xp.flip(w[d - k:], axis=0), xp.flip(T @ U[:, d - k:], axis=1)
    return orthonormalize(V[:, :r]), w
