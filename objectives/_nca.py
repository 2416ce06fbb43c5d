"""NCA's cost, gradient and Hessian-vector product by strips of rows: no n×n array is stored.

The dense path (``nca_softmax`` of ``objectives/_pairwise.py``) keeps the whole kernel K (and
the Hessian-vector product three more n×n arrays): 8·6.2·n² bytes, 62 GB at n = 10⁵.  Here
each strip of rows s is formed, used and dropped.  The softmax is row-local, so a strip holds
everything its rows need: with rows sorted by class, D_ij = ‖u_i − u_j‖² (D_ii = ∞),
m_i = min_j D_ij,

    E_ij = exp(−(D_ij − m_i))  (0 past CLIP),   P_ij = E_ij / Σ_j E_ij,
    p_i = Σ_{j: z_j = z_i} P_ij,   q_i = Σ_{j: z_j ≠ z_i} P_ij                          (S1)

(q summed directly, as the dense path does).  With A_ij = P_ij (p_i − 1[z_i = z_j]) (rows
summing to 0) the gradient of f = Σ_i p_i is ∂f/∂U = 2 (diag(Aᵀ1) U − AU − AᵀU); the strip
adds its rows of AU and its share A_sᵀU_s of AᵀU and of Aᵀ1.  The Hessian-vector product
along dU differentiates A row by row,

    dD_ij = 2 (u_i − u_j)ᵀ(du_i − du_j),   dP_ij = P_ij (Σ_k P_ik dD_ik − dD_ij),
    dp_i = Σ_{j: z_j = z_i} dP_ij,          dA_ij = dP_ij (p_i − 1[z_i = z_j]) + P_ij dp_i  (S2)

    d(∂f/∂U) = 2 (Lap(dA + dAᵀ) U + Lap(A + Aᵀ) dU)

again accumulated strip by strip.  Memory: about six strip × n float64 arrays (the strip has
``strip_rows`` rows) besides U and dU; time: n² exponentials per pass (the dense path's
symmetric form needs n²/2), which is why the dense path is kept for small n
(``DENSE_MAX``).
"""

from __future__ import annotations

import numpy as np

from ldr.objectives._pairwise import CLIP, exp_neg, strip_rows

#: the dense path (one n×n kernel, 8·6.2·n² bytes: 208 MB at n = 2048) up to this many rows;
#: strips beyond.  The dense path exponentiates half the entries (K is symmetric) but forms
#: n×n temporaries; past about 2000 rows those cost more than the strips' second half of
#: exponentials (the crossover was timed with one BLAS thread against the strips, cost,
#: gradient and Hessian-vector product)
DENSE_MAX = 2048


def _rows_softmax(U: np.ndarray, sq: np.ndarray, z: np.ndarray, i0: int, i1: int,
                  keep: np.ndarray):
    """(P_s, same_s, p_s, q_s) of (S1) for the rows [i0, i1); ``keep`` a boolean buffer of
    at least i1 − i0 rows and n columns (:func:`exp_neg`'s mask, one for every strip)."""
    D = U[i0:i1] @ U.T
    D *= -2.0
    D += sq
    D += sq[i0:i1, None]
    rows = np.arange(i1 - i0)
    D[rows, rows + i0] = np.inf
    nearest = D.argmin(axis=1)
    D -= D[rows, nearest][:, None]
    P = exp_neg(D, keep[: i1 - i0])
    P[rows, rows + i0] = 0.0
    P /= P.sum(axis=1)[:, None]
    same = z[i0:i1, None] == z[None, :]
    p = np.where(same, P, 0.0).sum(axis=1)
    q = np.where(same, 0.0, P).sum(axis=1)
    return P, same, p, q


def nca_strips(U: np.ndarray, z: np.ndarray, dU: np.ndarray | None = None,
               step: int | None = None):
    """``(f, G)`` with f = Σ_i p_i and G = ∂f/∂U, or with ``dU`` the derivative of G along dU
    ((S1), (S2)); ``z`` the class codes of the rows of U, ``step`` the rows per strip."""
    n, r = U.shape
    step = strip_rows(n) if step is None else int(step)
    sq = np.einsum("ij,ij->i", U, U)
    hessian = dU is not None
    if hessian:
        a = np.einsum("ij,ij->i", U, dU)
    f = 0.0
    AU = np.empty((n, r))       # rows of A U (or of dA U + A dU)
    AtU = np.zeros((n, r))      # Aᵀ U (or dAᵀ U + Aᵀ dU)
    col = np.zeros(n)           # Aᵀ 1
    dcol = np.zeros(n)          # dAᵀ 1
    drow = np.zeros(n)          # dA 1 (0 analytically; kept as the dense path computes it)
    keep = np.empty((min(step, n), n), dtype=bool)   # exp_neg's mask, reused by every strip
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        s = slice(i0, i1)
        P, same, p, q = _rows_softmax(U, sq, z, i0, i1, keep)
        f += float(p.sum())
        A = P * np.where(same, -q[:, None], p[:, None])
        col += A.sum(axis=0)
        if not hessian:
            AU[s] = A @ U
            AtU += A.T @ U[s]
            continue
        # dD_ij = 2 (a_i + a_j − u_i·du_j − du_i·u_j), a_i = u_i·du_i
        dD = U[s] @ dU.T
        dD += dU[s] @ U.T
        dD -= a
        dD -= a[s, None]
        dD *= -2.0
        dP = dD
        np.subtract(np.einsum("ij,ij->i", P, dD)[:, None], dD, out=dP)
        dP *= P
        dp = np.where(same, dP, 0.0).sum(axis=1)
        dA = dP * np.where(same, -q[:, None], p[:, None])
        dA += P * dp[:, None]
        drow[s] = dA.sum(axis=1)
        dcol += dA.sum(axis=0)
        AU[s] = dA @ U + A @ dU
        AtU += dA.T @ U[s] + A.T @ dU[s]
    if not hessian:
        return f, 2.0 * (col[:, None] * U - AU - AtU)
    return 2.0 * ((drow + dcol)[:, None] * U + col[:, None] * dU - AU - AtU)


def strip_memory(n: int) -> float:
    """Bytes of ``nca_strips``' arrays at n rows: about ten strip × n float64 arrays (and
    their boolean mask) plus a few n×r ones."""
    return 8.0 * 10 * n * min(n, strip_rows(n)) + 2**20


def nca_memory(n: int) -> float:
    """Bytes of NCA's oracles: up to ``DENSE_MAX`` rows the dense path's peak, 6.2 n×n
    float64 arrays (the kernel, the Hessian-vector product's three and the temporaries;
    ``tests/test_pairwise_scale.py`` checks such declarations against tracemalloc), the
    strips' beyond (``objectives/_nca.py``)."""
    return 8 * 6.2 * n**2 if n <= DENSE_MAX else strip_memory(n)


def nca_sampled(X: np.ndarray, z: np.ndarray, M: np.ndarray, idx: np.ndarray, cand):
    """(Σ_{i∈I} p̂_i, its gradient in M) with each p̂_i the softmax over i's candidates
    (``objectives/_candidates.py``, C1): with weights w_ij = 1 on the neighbours N_i and n/m
    on the sampled columns R ∩ F_i (0 elsewhere),

        p̂_ij = w_ij e^{−D_ij} / Σ_k w_ik e^{−D_ik},   p̂_i = Σ_{j: z_j = z_i} p̂_ij      (S3)

    and ∂p̂_i/∂D_ik = A_ik = p̂_ik (p̂_i − 1[z_i = z_k]), as for the exact term.  O(b(K + m)r
    + bKd + md) time for b = |I|; exact when m ≥ n."""
    from ldr.objectives._candidates import block_sqdist, gathered_sqdist, pair_gradient

    idx = np.asarray(idx, dtype=np.intp)
    b, r = idx.shape[0], M.shape[1]
    UI = X[idx] @ M
    N = cand.neighbours(idx, lambda: X @ M)
    R = cand.columns(idx)
    UN = (X[N.ravel()] @ M).reshape(b, N.shape[1], r)
    UR = X[R] @ M
    du, Dn = gathered_sqdist(UI, UN)
    Df = block_sqdist(UI, UR)
    wf = cand.far_weights(idx, N, R)
    with np.errstate(divide="ignore"):
        Lf = np.log(wf) - Df
    Ln = -Dn
    top = np.maximum(Ln.max(axis=1, initial=-np.inf), Lf.max(axis=1))
    En = np.exp(np.maximum(Ln - top[:, None], -CLIP))
    Ef = np.exp(np.maximum(Lf - top[:, None], -CLIP))
    Ef[wf == 0] = 0.0
    Z = En.sum(axis=1) + Ef.sum(axis=1)
    En /= Z[:, None]
    Ef /= Z[:, None]
    zi = z[idx, None]
    same_n, same_f = z[N] == zi, z[R][None, :] == zi
    p = np.where(same_n, En, 0.0).sum(axis=1) + np.where(same_f, Ef, 0.0).sum(axis=1)
    An = En * (p[:, None] - same_n)
    Af = Ef * (p[:, None] - same_f)
    G = pair_gradient(X, idx, UI, [(N, du, An)], R, UR, Af)
    return float(p.sum()), G
