"""The small dense factorizations of the manifolds: polar factor, QR, largest eigenvalue.

Each is written once against the array API standard (NumPy >= 2 is such a namespace), so it
computes in the namespace and on the device of its argument, for one matrix or for each
matrix of a stack (..., m, n):

* ``polar(A) = U Vᵀ`` for ``A = U S Vᵀ`` (thin SVD): the orthonormal matrix nearest to A in
  the Frobenius norm (Higham 1986), the polar retraction of Absil & Malick (2012);
* ``qr(A) = Q`` of ``A = Q R`` with ``diag(R) ≥ 0``: with that sign convention Q is unique
  for A of full column rank (Golub & Van Loan 2013, Thm. 5.2.3), so Q is a function of A;
* ``top_eigenvalue(G)``: the largest eigenvalue of a symmetric G, or the largest over a
  stack.

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
