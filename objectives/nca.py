"""Neighbourhood components analysis (Goldberger, Roweis, Hinton & Salakhutdinov 2004): the
objective :class:`NCA` and its oracles.

With u_i = L x_i and D_ij = ‖u_i − u_j‖² (``objectives/dml.py``), Goldberger et al.'s
stochastic neighbour rule and objective (their Eqs. 1–3, the objective scikit-learn's
``NeighborhoodComponentsAnalysis`` maximizes)::

    p_ij = exp(−D_ij) / Σ_{k≠i} exp(−D_ik),   p_ii = 0
    f_NCA(L) = Σ_i p_i,   p_i = Σ_{j: z_j = z_i} p_ij          (the expected number of
                                                              leave-one-out 1-NN successes)

a **sum** over samples, as scikit-learn's (not a mean).  The cost minimized is −f_NCA.  With
A_ij = p_ij (p_i − 1[z_i = z_j]) = ∂p_i/∂D_ij, S = A + Aᵀ and Lap(S) = diag(S1) − S,

    ∂f_NCA/∂U = 2 Lap(S) U          (U = XLᵀ, n×r)

and the Hessian-vector product differentiates it once more.

**Dense oracles** up to ``DENSE_MAX`` samples: one n×n kernel per point, exponentiated on its
upper triangle (``objectives/pairwise.py``, Eqs. P1–P2), or up to ``SMALL`` samples (r < 8)
the plain row-stabilized softmax over the whole array.  **Strips** beyond (or with
``block_size``): no n×n array is stored; each strip of rows s is formed, used and dropped.
The softmax is row-local, so a strip holds everything its rows need: with rows sorted by
class, D_ii = ∞ and m_i = min_j D_ij,

    E_ij = exp(−(D_ij − m_i))  (0 past CLIP),   P_ij = E_ij / Σ_j E_ij,
    p_i = Σ_{j: z_j = z_i} P_ij,   q_i = Σ_{j: z_j ≠ z_i} P_ij                          (S1)

(q summed directly, as the dense path does).  The gradient is ∂f/∂U = 2 (diag(Aᵀ1) U − AU −
AᵀU); the strip adds its rows of AU and its share A_sᵀU_s of AᵀU and of Aᵀ1.  The
Hessian-vector product along dU differentiates A row by row,

    dD_ij = 2 (u_i − u_j)ᵀ(du_i − du_j),   dP_ij = P_ij (Σ_k P_ik dD_ik − dD_ij),
    dp_i = Σ_{j: z_j = z_i} dP_ij,          dA_ij = dP_ij (p_i − 1[z_i = z_j]) + P_ij dp_i  (S2)

    d(∂f/∂U) = 2 (Lap(dA + dAᵀ) U + Lap(A + Aᵀ) dU)

again accumulated strip by strip.  Memory: the dense path 8·6.2·n² bytes (62 GB at
n = 10⁵), the strips about six strip × n float64 arrays besides U and dU; time: n²
exponentials per pass (the dense path's symmetric form needs n²/2).  **Sampled batches**
(:meth:`~ldr.objectives.dml.MetricLearning.sample_batches`): each sample's softmax over its
candidate set, Eq. S3 below.

**Namespaces.**  The strips and the sampled batches are array API code: rows of another
namespace (a PyTorch tensor on a GPU or not, CuPy) are computed on there, strips at every n
(the dense path is NumPy's in-place code), and only scalars, each batch's indices and
neighbour lists and the d×d start cross to the host.

Reference: J. Goldberger, S. T. Roweis, G. E. Hinton, R. Salakhutdinov (2004),
"Neighbourhood components analysis", NIPS 17, 513–520.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method
from ldr.data import arrays
from ldr.objectives.dml import MetricLearning
from ldr.objectives.pairwise import (
    SMALL,
    WIDE,
    class_blocks,
    ddist,
    exp_neg,
    nca_laplacian_times,
    nca_probabilities,
    nca_softmax,
    same_class_mask,
    strip_rows,
    sym_laplacian_times,
    with_own_columns,
)

__all__ = ["NCA"]

#: the dense path (one n×n kernel, 8·6.2·n² bytes: 208 MB at n = 2048) up to this many rows;
#: strips beyond.  The dense path exponentiates half the entries (K is symmetric) but forms
#: n×n temporaries; past about 2000 rows those cost more than the strips' second half of
#: exponentials (the crossover was timed with one BLAS thread against the strips, cost,
#: gradient and Hessian-vector product)
DENSE_MAX = 2048


def _rows_softmax(U, sq, z, i0: int, i1: int, keep: np.ndarray | None):
    """(P_s, same_s, p_s, q_s) of (S1) for the rows [i0, i1), in U's namespace (z the class
    codes there); ``keep`` :func:`exp_neg`'s boolean buffer of at least i1 − i0 rows and n
    columns for NumPy (one for every strip), else None."""
    xp = arrays.namespace(U)
    D = U[i0:i1, :] @ U.T
    D *= -2.0
    D += sq
    D += sq[i0:i1, None]
    D = with_own_columns(D, np.arange(i0, i1), xp.inf)
    D -= xp.min(D, axis=1)[:, None]
    P = exp_neg(D, None if keep is None else keep[: i1 - i0])   # 0 on the own column (∞)
    P /= xp.sum(P, axis=1)[:, None]
    same = z[i0:i1, None] == z[None, :]
    p = xp.sum(xp.where(same, P, 0.0), axis=1)
    q = xp.sum(xp.where(same, 0.0, P), axis=1)
    return P, same, p, q


def nca_strips(U, z, dU=None, step: int | None = None):
    """``(f, G)`` with f = Σ_i p_i and G = ∂f/∂U, or with ``dU`` the derivative of G along dU
    ((S1), (S2)); ``z`` the class codes of the rows of U (in U's namespace, where the strips
    are computed), ``step`` the rows per strip."""
    xp = arrays.namespace(U)
    n = U.shape[0]
    step = strip_rows(n) if step is None else int(step)
    sq = xp.sum(U * U, axis=1)
    hessian = dU is not None
    if hessian:
        a = xp.sum(U * dU, axis=1)
    f = 0.0
    AU = []                     # strips of rows of A U (or of dA U + A dU)
    AtU = xp.zeros_like(U)      # Aᵀ U (or dAᵀ U + Aᵀ dU)
    col = xp.zeros_like(sq)     # Aᵀ 1
    dcol = xp.zeros_like(sq)    # dAᵀ 1
    drow = []                   # dA 1 (0 analytically; kept as the dense path computes it)
    # exp_neg's mask, reused by every strip (NumPy's in-place path)
    keep = np.empty((min(step, n), n), dtype=bool) if arrays.numpy_fast_path(U) else None
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        P, same, p, q = _rows_softmax(U, sq, z, i0, i1, keep)
        f = f + xp.sum(p)
        A = P * xp.where(same, -q[:, None], p[:, None])
        col += xp.sum(A, axis=0)
        Us = U[i0:i1, :]
        if not hessian:
            AU.append(A @ U)
            AtU += A.T @ Us
            continue
        dUs = dU[i0:i1, :]
        # dD_ij = 2 (a_i + a_j − u_i·du_j − du_i·u_j), a_i = u_i·du_i
        dD = Us @ dU.T
        dD += dUs @ U.T
        dD -= a
        dD -= a[i0:i1, None]
        dD *= -2.0
        dD *= P        # P ∘ dD, then dP = P ∘ (row sums of P ∘ dD) − P ∘ dD
        dP = P * xp.sum(dD, axis=1)[:, None]
        dP -= dD
        del dD
        dp = xp.sum(xp.where(same, dP, 0.0), axis=1)
        dA = dP * xp.where(same, -q[:, None], p[:, None])
        dA += P * dp[:, None]
        drow.append(xp.sum(dA, axis=1))
        dcol += xp.sum(dA, axis=0)
        AU.append(dA @ U + A @ dU)
        AtU += dA.T @ Us + A.T @ dUs
    AU = xp.concat(AU, axis=0)
    if not hessian:
        return float(f), 2.0 * (col[:, None] * U - AU - AtU)
    drow = xp.concat(drow)
    return 2.0 * ((drow + dcol)[:, None] * U + col[:, None] * dU - AU - AtU)


def strip_memory(n: int) -> float:
    """Bytes of ``nca_strips``' arrays at n rows: about ten strip × n float64 arrays (and
    their boolean mask) plus a few n×r ones."""
    return 8.0 * 10 * n * min(n, strip_rows(n)) + 2**20


def nca_memory(n: int) -> float:
    """Bytes of NCA's oracles: up to ``DENSE_MAX`` rows the dense path's peak, 6.2 n×n
    float64 arrays (the kernel, the Hessian-vector product's three and the temporaries;
    ``tests/test_pairwise_scale.py`` checks such declarations against tracemalloc), the
    strips' beyond."""
    return 8 * 6.2 * n**2 if n <= DENSE_MAX else strip_memory(n)


def nca_sampled(rows, M):
    """(Σ_{i∈I} p̂_i, its gradient in M) with each p̂_i the softmax over i's candidates
    (``objectives/candidates.py``, C1): with weights w_ij = 1 on the neighbours N_i and n/m
    on the sampled columns R ∩ F_i (0 elsewhere),

        p̂_ij = w_ij e^{−D_ij} / Σ_k w_ik e^{−D_ik},   p̂_i = Σ_{j: z_j = z_i} p̂_ij      (S3)

    and ∂p̂_i/∂D_ik = A_ik = p̂_ik (p̂_i − 1[z_i = z_k]), as for the exact term.  ``rows``
    are the batch's candidate rows, ``(X_I, z_I, X_N, z_N, X_R, z_R, w_R)``
    (:meth:`~ldr.objectives.candidates.Candidates.rows`: X_N the b·K neighbours' rows, z_N
    their codes b×K, w_R the sampled columns' weights b×m: n/m, or 0 on the row itself and
    its neighbours).  As in (S1), a term more than CLIP below its row's largest is 0.
    O(b(K + m)r + bKd + md) time for b = |I|; exact when m ≥ n."""
    from ldr.objectives.candidates import block_sqdist, gathered_sqdist, pair_gradient

    XI, zI, XN, zN, XR, zR, wf = rows
    xp = arrays.namespace(XI)
    b, K = zN.shape
    UI = XI @ M
    UN = xp.reshape(XN @ M, (b, K, M.shape[1]))
    UR = XR @ M
    du, Dn = gathered_sqdist(UI, UN)
    Df = block_sqdist(UI, UR)
    # S_ij = D_ij − log w_ij − s_i ≥ 0, with w_ij the one weight n/m (+∞ where w_ij = 0: the
    # row itself and its neighbours among the columns) and s_i the row's least such exponent;
    # exp_neg zeroes what lies past CLIP, as the exact oracles do
    Sf = Df
    Sf -= math.log(max(1.0, float(xp.max(wf))))
    Sf = arrays.fill_where(Sf, wf == 0, xp.inf)
    least = xp.min(Sf, axis=1)
    if K > 0:
        least = xp.minimum(least, xp.min(Dn, axis=1))
    Sf -= least[:, None]
    Ef = exp_neg(Sf)
    En = exp_neg(Dn - least[:, None])
    Z = xp.sum(En, axis=1) + xp.sum(Ef, axis=1)
    En /= Z[:, None]
    Ef /= Z[:, None]
    zi = zI[:, None]
    same_n = zN == zi
    same_f = zR[None, :] == zi
    En_same = xp.where(same_n, En, 0.0)   # the classmates' shares
    Ef_same = xp.where(same_f, Ef, 0.0)
    p = xp.sum(En_same, axis=1) + xp.sum(Ef_same, axis=1)
    An = En * p[:, None]                  # A = p̂_ij (p̂_i − 1[z_i = z_j])
    An -= En_same
    Af = Ef * p[:, None]
    Af -= Ef_same
    G = pair_gradient(XI, UI, [(XN, du, An)], XR, UR, Af)
    return float(xp.sum(p)), G


class NCA(MetricLearning):
    """Neighbourhood components analysis: minimize −f_NCA(L) = −Σ_i p_i over M = c Lᵀ ∈ R^{d×r}
    (module docstring; Goldberger et al. 2004, Eqs. 1–3).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Data as rows (copied; ``X`` is not modified).
    y : array of shape (n_samples,)
        Class labels.  With one class every neighbour is a classmate: f(L) = n for every L,
        the gradient is 0 and a solve returns its start (scikit-learn's behaviour).
    r : int
        Embedding dimension, 1 ≤ r ≤ n_features (r = n_features learns a full-rank metric).
    start : {"auto", "lda", "pca", "identity"}
        Which start :meth:`heuristic` returns (scikit-learn's NCA ``init`` names).
    block_size : int, optional
        Rows per strip of the strip-by-strip oracles (S1–S2), which keep no n×n array.
        None (default): one dense n×n kernel up to ``DENSE_MAX`` = 2048 samples, strips of
        max(32, 2¹⁶/n) rows beyond; rows of another namespace (a PyTorch tensor, CuPy) take
        the strips at every n, computed in that namespace and on its device, as the sampled
        batches are.

    Attributes
    ----------
    classes_, codes_, r, shape, mean_, unit_, n_terms :
        As :class:`~ldr.objectives.dml.MetricLearning`.
    block_size : int or None
        The parameter.

    Notes
    -----
    The cost equals −(scikit-learn's NCA objective) at L = Mᵀ/c; :meth:`objective_value`
    returns the positive value.  The cost is bounded (0 ≥ −f ≥ −n) but on data whose classes
    a map separates its infimum lies at ‖L‖ → ∞ (the map's scale is the softmax's only
    temperature): along the ray of such a map the gradient vanishes exponentially, so a run
    ends by the gradient rule there too.

    ``default_solver`` is ``"lbfgs"`` (:class:`ldr.solvers.LBFGS`); the
    :class:`~ldr.estimators.NCA` estimator runs its route (:mod:`ldr.solvers.routes`).
    """

    method = Method("nca", "neighbourhood components analysis, −Σ_i p_i on R^{d×r}",
                    supervised=True, memory=lambda n, sizes: nca_memory(n))

    default_solver = "lbfgs"
    min_classes = 1

    def __init__(self, X, y, r, start="auto", block_size: int | None = None, *,
                 init="deprecated"):
        start = renamed_value(type(self).__name__, "init", "start", init, start)
        super().__init__(X, y, r, start)
        if block_size is not None and (isinstance(block_size, bool) or not isinstance(
                block_size, numbers.Integral) or block_size < 1):
            raise ParameterError("block_size", f"must be a positive integer, got {block_size!r}")
        self.block_size = block_size
        # strips for rows read a chunk at a time and rows of another namespace (the dense
        # path's symmetric kernel and class blocks are NumPy's in-place code)
        self._strips = (block_size is not None or self.n_samples > DENSE_MAX
                        or self._rows is not None or not arrays.numpy_fast_path(self._Xs))
        if self._rows is not None:   # rows read a chunk at a time: in their own order
            self._blocks = None
            self._Xo = None
            self._zo = self.codes_
        else:
            # rows sorted by class: the same-class pairs are the diagonal blocks (pairwise.py,
            # P1)
            order, self._blocks = class_blocks(self.codes_)
            xp = arrays.namespace(self._Xs)
            where = arrays.device(self._Xs)
            self._Xo = xp.take(self._Xs, xp.asarray(order, device=where), axis=0)
            self._zo = xp.asarray(self.codes_[order], device=where)   # in the rows' namespace
            self._Xs = None   # the sorted copy is the objective's one copy of the rows
        # small tables: the plain softmax over the whole array with the same-class mask
        self._same = (same_class_mask(self._blocks, self.n_samples)
                      if not self._strips and self.n_samples <= SMALL and self.r < WIDE else None)

    def batch(self, M, indices):
        """The samples' terms of the cost (Eq. S1 of :class:`~ldr.Objective`), −Σ_{i∈I} p_i
        and its gradient, without an n×n array: with rows I of the n×n softmax (b × n, the
        rows sorted by class), A_ik = p_ik (p_i − 1[z_i = z_k]) = ∂p_i/∂D_ik and
        U = XM,

            ∂(Σ_{i∈I} p_i)/∂M = 2 (X_Iᵀ (diag(A1) U_I − A U) − Xᵀ (AᵀU_I − diag(Aᵀ1) U))

        (the sum of 2 A_ik (x_i − x_k)(x_i − x_k)ᵀM), at O(b·n·r + n·d·r) time.  Term i is
        the i-th sample in class order.  After :meth:`sample_batches`, the estimate (S3)."""
        if self._cand is not None:
            f, G = nca_sampled(self._candidate_rows(M, indices), M)
            return -f, -G
        if self._rows is not None:
            raise ParameterError("indices", "rows read a chunk at a time (a Dask array or "
                                 "memmap) take sampled batches: call sample_batches() first")
        xp = arrays.namespace(self._Xo)
        idx = np.asarray(indices, dtype=np.intp)
        at = xp.asarray(idx, device=arrays.device(self._Xo))
        X = self._Xo
        U = X @ M
        Ub = xp.take(U, at, axis=0)
        sq = xp.sum(U * U, axis=1)
        D = xp.take(sq, at)[:, None] + sq[None, :] - 2.0 * (Ub @ U.T)
        D = with_own_columns(xp.clip(D, 0.0, None), idx, xp.inf)  # p_ii = 0
        D -= xp.min(D, axis=1)[:, None]
        P = exp_neg(D)
        P /= xp.sum(P, axis=1)[:, None]
        same = xp.take(self._zo, at)[:, None] == self._zo[None, :]
        P_same = xp.where(same, P, 0.0)
        p = xp.sum(P_same, axis=1)
        A = P * p[:, None]      # A_ik = p_ik (p_i − 1[z_i = z_k])
        A -= P_same
        W1 = xp.sum(A, axis=1)[:, None] * Ub - A @ U
        W2 = A.T @ Ub - xp.sum(A, axis=0)[:, None] * U
        return -float(xp.sum(p)), -2.0 * (xp.take(X, at, axis=0).T @ W1 - X.T @ W2)

    def _sorted_codes(self) -> np.ndarray:
        return self._zo

    def _state(self, M) -> dict:
        key = self._point_key(M)
        if key == self._cache_key:
            return self._cache
        if self._strips:
            f, G = nca_strips(self._embed(M), self._zo, step=self.block_size)
            self._cache = {"f": f, "egrad": -self._tdot(G)}
        else:
            self._cache = nca_softmax(self._Xo @ M, self._blocks, self._same)
        self._cache_key = key
        return self._cache

    def objective_value(self, M) -> float:
        """f_NCA = Σ_i p_i at L = Mᵀ/c (scikit-learn's objective; −cost)."""
        st = self._state(M)
        return float(st["f"]) if "f" in st else float(st["p"].sum())

    def cost(self, M) -> float:
        return -self.objective_value(M)

    def egrad(self, M) -> np.ndarray:
        st = self._state(M)
        if "egrad" not in st:
            st["egrad"] = -2.0 * self._Xo.T @ nca_laplacian_times(st, st["U"], self._blocks)
        return arrays.namespace(st["egrad"]).asarray(st["egrad"], copy=True)

    def ehvp(self, M, V) -> np.ndarray:
        if self._strips:
            return -self._tdot(nca_strips(self._embed(M), self._zo, self._embed(V),
                                          step=self.block_size))
        st = self._state(M)
        U = st["U"]
        p = st["p"]
        P = nca_probabilities(st)
        dU = self._Xo @ V
        dP = ddist(U, dU)  # dD, then dp_ij = p_ij (Σ_k p_ik dD_ik − dD_ij), in place
        q = np.einsum("ij,ij->i", P, dP)
        np.subtract(q[:, None], dP, out=dP)
        dP *= P
        dp = np.empty_like(p)
        for b in self._blocks:
            dp[b] = dP[b, b].sum(axis=1)
        # dA_ij = dp_ij (p_i − 1[z_i = z_j]) + p_ij dp_i, with p_i − 1 = −q_i in the blocks
        dA = dP * p[:, None]
        for b in self._blocks:
            dA[b, b] = dP[b, b] * -st["q"][b, None]
        dA += P * dp[:, None]
        return -2.0 * self._Xo.T @ (sym_laplacian_times(dA, U)
                                    + nca_laplacian_times(st, dU, self._blocks))
