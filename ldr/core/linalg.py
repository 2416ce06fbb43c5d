"""Dense factorizations: the manifolds' small ones (polar factor, QR, largest eigenvalue) and
the Cholesky factorization of a kernel matrix with its solves.

Each is written once against the array API standard (NumPy >= 2 is such a namespace), so it
computes in the namespace and on the device of its argument, for one matrix or for each
matrix of a stack (..., m, n):

* ``polar(A) = U Vᵀ`` for ``A = U S Vᵀ`` (thin SVD): the orthonormal matrix nearest to A in
  the Frobenius norm (Higham 1986), the polar retraction of Absil & Malick (2012);
* ``qr(A) = Q`` of ``A = Q R`` with ``diag(R) ≥ 0``: with that sign convention Q is unique
  for A of full column rank (Golub & Van Loan 2013, Thm. 5.2.3), so Q is a function of A;
* ``top_eigenvalue(G)``: the largest eigenvalue of a symmetric G, or the largest over a
  stack;
* ``cholesky(A, shift)`` = L with LLᵀ = A + shift·I, and ``cholesky_solve(L, B)`` =
  (LLᵀ)⁻¹B: the array API standard has the factorization but no triangular solve, so the
  solve goes to the library's own (LAPACK's ``potrs`` through SciPy for NumPy,
  ``torch.cholesky_solve``, CuPy's ``solve_triangular``), and to two general solves with L
  and Lᵀ elsewhere.

**Dispatch.**  One NumPy float64 matrix goes to LAPACK directly (``gesdd``, ``geqrf`` and
``orgqr``, ``syevd`` — the routines ``numpy.linalg`` itself calls) without ``numpy.linalg``'s
argument handling, a fixed cost per call that a small d×r matrix does not amortize; any other
array, and a stack, takes the array-API code.  The direct calls are one dispatch,
``_lapack``, and the benchmark that keeps them is named there.

References
----------
N. J. Higham (1986), "Computing the polar decomposition — with applications", SIAM J. Sci.
Stat. Comput. 7, 1160–1174.  P.-A. Absil, J. Malick (2012), "Projection-like retractions on
matrix manifolds", SIAM J. Optim. 22, 135–158.  G. H. Golub, C. F. Van Loan (2013),
*Matrix Computations*, 4th ed., §5.2.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

from ldr.data import arrays


def _lapack(A) -> bool:
    """Whether ``A`` takes the direct LAPACK calls: one NumPy float64 matrix.

    The fast path is kept for the fixed cost of a solve on small problems (the retraction
    and the step measure run at every iteration)."""
    # benchmark: benchmarks/bench_overhead.py
    return arrays.numpy_fast_path(A) and A.ndim == 2 and A.dtype == np.float64


def polar(A):
    """The polar factor ``U Vᵀ`` of ``A = U S Vᵀ`` (of each matrix of a stack)."""
    if _lapack(A):
        U, _, Vt, info = lapack.dgesdd(A, full_matrices=0)
        if info == 0:
            return U @ Vt
    xp = arrays.namespace(A)
    U, _, Vt = xp.linalg.svd(A, full_matrices=False)
    return U @ Vt


def qr(A):
    """Q of ``A = Q R`` with ``diag(R) ≥ 0`` (of each matrix of a stack); A has at least as
    many rows as columns."""
    if _lapack(A) and A.shape[0] >= A.shape[1]:
        QR, tau, _, info = lapack.dgeqrf(A)
        if info == 0:
            Q, _, info = lapack.dorgqr(QR, tau)
            if info == 0:
                signs = np.sign(np.diagonal(QR)).copy()
                signs[signs == 0] = 1.0
                return Q * signs
    xp = arrays.namespace(A)
    Q, R = xp.linalg.qr(A)
    signs = xp.sign(xp.linalg.diagonal(R))
    signs = xp.where(signs == 0, xp.ones_like(signs), signs)
    return Q * signs[..., None, :]


def top_eigenvalue(G) -> float:
    """The largest eigenvalue of the symmetric matrix ``G``, or the largest over a stack
    (..., r, r), as a Python float."""
    xp = arrays.namespace(G)
    if G.shape[-1] == 1:
        return float(xp.max(G[..., 0, 0]))
    if _lapack(G):
        w, _, info = lapack.dsyevd(G, compute_v=0)
        if info == 0:
            return float(w[-1])
    return float(xp.max(xp.linalg.eigvalsh(G)[..., -1]))


def spectral_norm(D) -> float:
    """‖D‖₂, the largest singular value of the tall matrix ``D`` (the largest over a stack),
    from the r×r Gram matrix DᵀD: cheaper than an SVD of D, and D itself is formed, so a
    small ‖D‖₂ keeps its relative accuracy down to the underflow of its square."""
    return math.sqrt(max(top_eigenvalue(D.mT @ D), 0.0))


def scaled_norm(*parts) -> float:
    """The Frobenius norm of the arrays ``parts`` together, computed from them scaled by their
    largest entry, so that the squares neither under- nor overflow (entries of 1e±180)."""
    parts = [arrays.to_host(p) for p in parts]  # a rare path (under- or overflow)
    big = max((float(np.max(np.abs(p))) for p in parts if np.size(p)), default=0.0)
    if big == 0.0 or not math.isfinite(big):
        return big if big == 0.0 or math.isinf(big) else math.nan
    return big * math.sqrt(sum(float(np.vdot(p / big, p / big)) for p in parts))


def cholesky(A, shift: float = 0.0, overwrite: bool = False):
    """The lower Cholesky factor L of ``A + shift·I`` (A symmetric positive definite once
    shifted), in A's namespace and on its device; ``overwrite``: A may be written over (a
    NumPy A then takes the shift in place, no copy)."""
    # benchmark: benchmarks/bench_pairwise_scale.py --methods ksdr
    n = A.shape[0]
    if arrays.numpy_fast_path(A):
        if shift:
            A = A if overwrite else A.copy()
            A.flat[:: n + 1] += shift
        return scipy.linalg.cholesky(A, lower=True, overwrite_a=True, check_finite=False)
    xp = arrays.namespace(A)
    if shift:
        A = A + shift * arrays.eye_like(n, A)
    return xp.linalg.cholesky(A)


def cholesky_solve(L, B):
    """(LLᵀ)⁻¹ B for the lower Cholesky factor L (:func:`cholesky`), in L's namespace."""
    # benchmark: benchmarks/bench_pairwise_scale.py --methods ksdr
    if arrays.numpy_fast_path(L, B):
        return scipy.linalg.cho_solve((L, True), B, check_finite=False)
    import array_api_compat as compat

    if compat.is_torch_array(L):
        import torch

        return torch.cholesky_solve(B, L)
    if compat.is_cupy_array(L):
        from cupyx.scipy.linalg import solve_triangular

        return solve_triangular(L.T, solve_triangular(L, B, lower=True), lower=False)
    xp = arrays.namespace(L)
    return xp.linalg.solve(L.T, xp.linalg.solve(L, B))
