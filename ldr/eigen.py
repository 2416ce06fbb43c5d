"""Extreme generalized eigenvectors, as the eigenvector recipes and SCF need them."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ldr.manifolds import orthonormalize


def top_generalized(A: np.ndarray, B: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M, w)``: an orthonormal basis M of the r generalized eigenvectors of (A, B) with the
    largest eigenvalues (B positive definite), and the r + 1 largest eigenvalues, decreasing
    (the (r+1)-th gives the eigengap)."""
    d = A.shape[0]
    w, V = scipy.linalg.eigh(A, B, subset_by_index=[max(d - r - 1, 0), d - 1])
    w, V = w[::-1], V[:, ::-1]
    return orthonormalize(V[:, :r]), w
