"""Large-margin distance metric learning (LMNN's objective; Weinberger & Saul 2009, as the
survey's Eq. 27 writes it): the objective :class:`LargeMarginDML` and its oracles.

With u_i = L x_i and D_ij = ‖u_i − u_j‖² (``objectives/dml.py``)::

    f_LM(L) = Σ_i Σ_{j∈η(i)} ( D_ij + λ Σ_ℓ 1[z_ℓ ≠ z_i] h(1 + D_ij − D_iℓ) )

with λ = ``impostor_weight`` and η(i) the k = ``n_neighbors`` **target neighbours** of x_i:
its k nearest same-class samples in the *input* space (Euclidean distance of X as given),
fixed once before the optimization, as LMNN does (a class with m ≤ k samples gives each of
them its m − 1 classmates).  The survey's hinge [·]_+ has no derivative at 0, so h is the
**Huberized (quadratically smoothed) hinge**

    h(z) = 0 (z ≤ 0),   z²/(2δ) (0 < z < δ),   z − δ/2 (z ≥ δ)       (δ = ``smoothing``)

which is C¹ with h″ = 1/δ on (0, δ) and 0 elsewhere.  Chosen over softplus
(log(1 + e^{βz})/β) because it keeps LMNN's sparsity — triples (i, j, ℓ) outside the margin
(z ≤ 0) contribute exactly nothing, so the objective is the hinge's wherever the margin is
met or violated by more than δ (there it differs by the constant δ/2 per triple), while
softplus charges every one of the n²k triples log 2/β even at z = 0 and never vanishes.

**Oracles by strips of rows**: no n×n array is ever stored.  Rows are sorted by class, so a
sample's classmates are one block of columns.  For a strip of rows s the squared distances
D_s are formed with +∞ on the classmates' columns (never impostors), and for each target
slot t (target T_it, distance d_it, validity v_it ∈ {0, 1}) the hinge arguments
z = 1 + d_it − D_iℓ, with c = min(z⁺, δ),

    h(z) = c²/(2δ) + (z⁺ − c),   h′(z) = c/δ,   h″(z) = 1[0 < z < δ]/δ

(z = −∞ on the classmates' columns costs and weighs nothing).  With W the weights of
∂f/∂D — impostor pairs W_iℓ = −λ Σ_t v_it h′(z_itℓ), target pairs W_{i,T_it} =
v_it (1 + λ Σ_ℓ h′(z_itℓ)) —

    f = Σ_it v_it (d_it + λ Σ_ℓ h(z_itℓ)),      ∂f/∂U = 2 Lap(W + Wᵀ) U               (M1)

and the Hessian along dU differentiates W once more (dz = dd_it − dD_iℓ):

    d(∂f/∂U) = 2 Lap(dW + dWᵀ) U + 2 Lap(W + Wᵀ) dU                                     (M2)

The impostor part of each Laplacian product, diag(W1 + Wᵀ1) V − W V − WᵀV, is accumulated
strip by strip; the target part (n·k pairs) is a scatter.  O(n²(r + k)) time, no n×n array.
**Sampled batches**: each sample's impostors from its candidate set, Eq. M3 below.
Both are array API code: rows of another namespace (a PyTorch tensor, CuPy) are computed on
there, their target neighbours searched class by class there too (exactly,
:func:`~ldr.objectives.neighbors.strip_search`).

References: K. Q. Weinberger, L. K. Saul (2009), "Distance metric learning for large margin
nearest neighbor classification", JMLR 10, 207–244; J. P. Cunningham, Z. Ghahramani (2015),
"Linear dimensionality reduction: survey, insights, and generalizations", JMLR 16,
2859–2900, Eq. 27.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method
from ldr.data import arrays
from ldr.objectives.candidates import Candidates
from ldr.objectives.dml import MetricLearning
from ldr.objectives.neighbors import (
    keep_nearest,
    nearest_neighbors,
    recall_sample,
    resolve_neighbors,
)
from ldr.objectives.pairwise import class_blocks, strip_rows

__all__ = ["LargeMarginDML", "chunk_targets"]



def target_distances(U, T):
    """(u_i − u_{T_it}) as an (n, k, r) array and d_it = its squared norms, in U's
    namespace (T there too)."""
    xp = arrays.namespace(U)
    n, k = T.shape
    diff = U[:, None, :] - xp.reshape(xp.take(U, xp.reshape(T, (-1,)), axis=0),
                                      (n, k, U.shape[1]))
    return diff, xp.sum(diff * diff, axis=2)


def _pair_laplacian(diff, w, T, n: int):
    """Lap(W + Wᵀ) U for W supported on the target pairs (i, T_it) with weights w_it:
    w_it (u_i − u_T) added to row i and subtracted from row T_it (a scatter,
    :func:`ldr.data.arrays.index_add`)."""
    xp = arrays.namespace(diff)
    wd = w[:, :, None] * diff
    r = diff.shape[2]
    return xp.sum(wd, axis=1) - arrays.index_add(n, xp.reshape(T, (-1,)),
                                                  xp.reshape(wd, (-1, r)))


def _classmates_at_infinity(D, i0: int, i1: int, blocks: list[slice]):
    """Set D[i − i0, classmates of i] = +∞ for the rows i of the strip [i0, i1) (in place:
    slices, which every namespace but JAX's assigns)."""
    for b in blocks:
        lo = max(b.start, i0)
        hi = min(b.stop, i1)
        if lo < hi:
            D[lo - i0:hi - i0, b.start:b.stop] = math.inf
    return D


def large_margin(U, T, v, blocks: list[slice], lam: float, delta: float, dU=None):
    """(f, ∂f/∂U) of (M1), or, with ``dU``, the Hessian along dU of (M2), for U with rows
    sorted by class (``blocks`` the class slices), targets T (n×k) and validity v (n×k
    floats), all in U's namespace, where the strips are computed."""
    xp = arrays.namespace(U)
    n, r = U.shape
    k = T.shape[1]
    sq = xp.sum(U * U, axis=1)
    diff, d = target_distances(U, T)
    hessian = dU is not None
    if hessian:
        dsq = xp.sum(U * dU, axis=1)
        ddiff = target_distances(dU, T)[0]
        dd = 2.0 * xp.sum(diff * ddiff, axis=2)
    cost = xp.sum(v * d)
    hp_rows = []      # strips of Σ_ℓ h′(z_itℓ)
    hpp_rows = []     # strips of Σ_ℓ h″(z_itℓ) dz_itℓ (Hessian)
    # impostor parts of Lap(W + Wᵀ) V (V = U, or dU for the Hessian) and Lap(dW + dWᵀ) U
    V = dU if hessian else U
    lap_rows = []
    lap = xp.zeros_like(U)
    col_w = xp.zeros_like(sq)
    dlap_rows = []
    dlap = xp.zeros_like(U)
    col_dw = xp.zeros_like(sq)
    step = strip_rows(n)
    zero = xp.zeros(min(step, n), dtype=U.dtype, device=arrays.device(U))
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        Us = U[i0:i1, :]
        Vs = V[i0:i1, :]
        D = Us @ U.T
        D *= -2.0
        D += sq
        D += sq[i0:i1, None]
        D = _classmates_at_infinity(D, i0, i1, blocks)
        W = xp.zeros_like(D)
        if hessian:
            dD = Us @ dU.T + dU[i0:i1, :] @ U.T
            dD *= -2.0
            dD += 2.0 * dsq
            dD += 2.0 * dsq[i0:i1, None]
            dW = xp.zeros_like(D)
        hp = [zero[:i1 - i0]] * k
        hpp = [zero[:i1 - i0]] * k
        for t in range(k):
            vt = v[i0:i1, t]
            if not bool(xp.any(vt != 0)):
                continue
            Z = (1.0 + d[i0:i1, t])[:, None] - D            # −∞ on the classmates' columns
            Z = arrays.maximum_inplace(Z, 0.0)                # z⁺
            c = xp.minimum(Z, delta)
            if not hessian:
                h_rows = (xp.sum(c * c, axis=1) / (2.0 * delta) + xp.sum(Z, axis=1)
                          - xp.sum(c, axis=1))
                cost = cost + lam * xp.sum(vt * h_rows)
            hp[t] = xp.sum(c, axis=1) / delta
            W -= (lam / delta) * vt[:, None] * c
            if hessian:
                G = xp.where((Z > 0.0) & (Z < delta), dd[i0:i1, t][:, None] - dD, 0.0)
                hpp[t] = xp.sum(G, axis=1) / delta               # h″ dz · δ
                dW -= (lam / delta) * vt[:, None] * G
        hp_rows.append(xp.stack(hp, axis=1))
        hpp_rows.append(xp.stack(hpp, axis=1))
        col_w += xp.sum(W, axis=0)
        lap_rows.append(xp.sum(W, axis=1)[:, None] * Vs - W @ V)
        lap -= W.T @ Vs
        if hessian:
            col_dw += xp.sum(dW, axis=0)
            dlap_rows.append(xp.sum(dW, axis=1)[:, None] * Us - dW @ U)
            dlap -= dW.T @ Us
    lap += xp.concat(lap_rows, axis=0) + col_w[:, None] * V
    w_tgt = v * (1.0 + lam * xp.concat(hp_rows, axis=0))
    if not hessian:
        return float(cost), 2.0 * (lap + _pair_laplacian(diff, w_tgt, T, n))
    dlap += xp.concat(dlap_rows, axis=0) + col_dw[:, None] * U
    dw_tgt = lam * v * xp.concat(hpp_rows, axis=0)
    return 2.0 * (lap + _pair_laplacian(ddiff, w_tgt, T, n)
                  + dlap + _pair_laplacian(diff, dw_tgt, T, n))


def huber_hinge(z: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Huberized hinge h(z) and its first two derivatives (module docstring)."""
    c = np.clip(z, 0.0, delta)
    h = c * c / (2.0 * delta) + np.maximum(z - delta, 0.0)
    dh = c / delta
    d2h = ((z > 0) & (z < delta)) / delta
    return h, dh, d2h


def lmnn_memory(n: int, sizes) -> float:
    """Bytes of the large-margin oracles' arrays: about 12 strips of ``strip_rows(n)`` × n
    float64 entries at the peak (the Hessian's pass) — no n×n array."""
    return 8.0 * 12 * n * min(n, strip_rows(n))


def large_margin_sampled(rows, XT, vi, M, lam: float, delta: float):
    """The batch I's terms of (M1), f_i = Σ_t v_it (d_it + λ Σ_ℓ h(1 + d_it − D_iℓ)), and
    their gradient in M, the impostors ℓ (z_ℓ ≠ z_i) taken from i's candidates ``rows``
    (``objectives/candidates.py``, C1: the neighbours N_i with weight 1, the sampled columns
    with n/m), ``XT`` the batch's target rows (b·k × d, row-major by sample) and ``vi`` their
    validity (b×k):

        f̂_i = Σ_t v_it (d_it + λ Σ_ℓ w_iℓ h(z_itℓ)),   ∂f̂_i/∂d_it = v_it (1 + λ Σ_ℓ w_iℓ h′),
        ∂f̂_i/∂D_iℓ = −λ w_iℓ Σ_t v_it h′(z_itℓ)                                        (M3)

    an unbiased estimate of f_i and of its gradient (f_i is linear in the sums over ℓ);
    exact when m ≥ n.  O(b·k·(K + m)) time and memory."""
    from ldr.objectives.candidates import block_sqdist, gathered_sqdist, pair_gradient

    XI, zI, XN, zN, XR, zR, wf = rows
    xp = arrays.namespace(XI)
    b, k = vi.shape
    UI = XI @ M
    UN = xp.reshape(XN @ M, (zN.shape[0], zN.shape[1], M.shape[1]))
    UR = XR @ M
    UT = xp.reshape(XT @ M, (b, k, M.shape[1]))
    du_t, d = gathered_sqdist(UI, UT)
    du_n, Dn = gathered_sqdist(UI, UN)
    Df = block_sqdist(UI, UR)
    zi = zI[:, None]
    wn = xp.astype(zN != zi, Dn.dtype)
    wf = xp.where(zR[None, :] != zi, wf, 0.0)
    cost = xp.sum(vi * d)
    hp_t = xp.zeros_like(d)                     # Σ_ℓ w h′ per target slot
    Wn = xp.zeros_like(Dn)
    Wf = xp.zeros_like(Df)
    for D, w, W in ((Dn, wn, Wn), (Df, wf, Wf)):
        if D.shape[1] == 0:
            continue
        Z = 1.0 + d[:, :, None] - D[:, None, :]      # b×k×(K or m)
        c = xp.clip(Z, 0.0, delta)
        h = c * c / (2.0 * delta) + arrays.maximum_inplace(Z - delta, 0.0)
        hp = c / delta
        # Σ_it v_it Σ_ℓ w_iℓ h_itℓ, Σ_ℓ w_iℓ h′_itℓ and Σ_t v_it h′_itℓ as batched products
        cost = cost + lam * xp.sum((vi[:, None, :] @ h)[:, 0, :] * w)
        hp_t += (hp @ w[:, :, None])[:, :, 0]
        W -= lam * w * (vi[:, None, :] @ hp)[:, 0, :]
    Wt = vi * (1.0 + lam * hp_t)
    return float(cost), pair_gradient(XI, UI, [(XT, du_t, Wt), (XN, du_n, Wn)], XR, UR, Wf)


def chunk_targets(rows, codes: np.ndarray, k: int, neighbors: str = "auto",
                  random_state: int | None = 0) -> tuple:
    """``(T, valid, recall)``: each row's k target neighbours, its nearest classmates **within
    its chunk** of ``rows`` (:class:`~ldr.objectives.chunked_rows.ChunkedRows`), searched by
    ``neighbors`` there (:func:`~ldr.objectives.neighbors.nearest_neighbors`; a class with
    m ≤ k rows in a chunk gives each of them its m − 1 classmates), in one pass over the
    chunks.  In the same pass, ``RECALL_SAMPLE`` rows drawn from ``random_state`` are compared
    with every classmate (scipy's ``cdist``, by differences), so ``recall`` is the share of the
    exact target neighbours over all n rows that T holds — a neighbour counts when it is no
    farther than the k-th exact one, as :func:`~ldr.objectives.neighbors.neighbor_recall`.
    Memory: a chunk and the n×k indices."""
    from scipy.spatial.distance import cdist

    n = codes.shape[0]
    T = np.tile(np.arange(n)[:, None], (1, k))
    valid = np.zeros((n, k), dtype=bool)
    sample = recall_sample(n, random_state)
    S = rows.take(sample)
    zs = codes[sample]
    best = np.full((sample.shape[0], k + 1), np.inf)   # the k + 1 nearest (the row itself too)
    for c in range(rows.n_chunks):
        lo = rows.bounds[c]
        X = rows.read(c)
        z = codes[lo:rows.bounds[c + 1]]
        for cls in np.unique(z):
            idx = np.flatnonzero(z == cls)
            m = min(k, idx.shape[0] - 1)
            if m >= 1:
                nbr, _ = nearest_neighbors(X[idx], m, resolve_neighbors(neighbors, idx.shape[0]),
                                           random_state, measure=False)
                T[lo + idx, :m] = lo + idx[nbr]
                valid[lo + idx, :m] = True
            mine = np.flatnonzero(zs == cls)
            if mine.shape[0]:
                near = cdist(S[mine], X[idx], "sqeuclidean")
                best[mine] = keep_nearest(np.hstack([best[mine], near]), k)
    sizes = np.bincount(codes)[zs]
    exact = np.minimum(k, sizes - 1)          # the exact neighbours each sampled row has
    kth = best[np.arange(sample.shape[0]), exact]
    cols = T[sample]
    held = np.unique(cols)
    XT = rows.take(held)[np.searchsorted(held, cols)]
    # by the same arithmetic as the exact distances: a target at the k-th one's distance counts
    found = np.vstack([cdist(S[i:i + 1], XT[i], "sqeuclidean") for i in range(S.shape[0])])
    hits = valid[sample] & (found <= kth[:, None])
    total = int(exact.sum())
    return T, valid, (float(hits.sum()) / total if total else None)


class LargeMarginDML(MetricLearning):
    """Large-margin DML: minimize f_LM(L) (LMNN's objective, the survey's Eq. 27, with a
    Huberized hinge) over M = c Lᵀ ∈ R^{d×r} (module docstring).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Data as rows (copied; ``X`` is not modified).
    y : array of shape (n_samples,)
        Class labels, at least two classes.
    r : int
        Embedding dimension, 1 ≤ r ≤ n_features.
    n_neighbors : int, default 3
        k, the target neighbours per sample (nearest same-class samples in the input space).
    impostor_weight : float > 0, default 1
        λ, the weight of the margin (impostor) term (LMNN's μ/(1 − μ); λ = 1 is its usual
        μ = ½).
    smoothing : float > 0, default 0.5
        δ, the width of the Huberized hinge's quadratic piece, in the embedding's squared
        distance units (the margin is 1): half the margin, so the Hessian (1/δ on the
        active band) stays well conditioned while the cost is the hinge's minus δ/2 on
        every triple violating the margin by more than δ.
    start : {"auto", "lda", "pca", "identity"}
        Which start :meth:`heuristic` returns (scikit-learn's NCA rule, as :class:`NCA`).
    neighbors : {"auto", "exact", "approximate"}, default "auto"
        The search for the target neighbours, class by class
        (:func:`ldr.objectives.neighbors.nearest_neighbors`).  "auto" is exact while the
        exact search's pairs, Σ_c n_c² over the classes' sizes, are at most the square of
        ``EXACT_MAX_SAMPLES`` (one set's switch, :mod:`ldr.objectives.neighbors`), and
        NN-descent beyond, its recall measured in each class.
    random_state : int or None, default 0
        Seed of the approximate search and of the rows its recall is measured on.
    k, lam, init : deprecated
        The former names of ``n_neighbors``, ``impostor_weight`` and ``start``; each warns
        (a FutureWarning) and is used when given; removed in the next release.

    Attributes
    ----------
    classes_, codes_, r, shape, mean_, unit_, n_terms :
        As :class:`~ldr.objectives.dml.MetricLearning`.
    n_neighbors, impostor_weight, smoothing : int, float, float
        The validated parameters.
    targets_, target_mask_ : (n_samples, n_neighbors)
        Each sample's target neighbours (indices into X's rows) and which slots are valid (a
        class of m ≤ k samples gives each of them m − 1).
    target_recall_ : float or None
        With approximate search, the share of the exact target neighbours found, measured in
        each class and weighted by its size; None for exact search.  For rows read a chunk at
        a time, the targets are each row's nearest classmates within its chunk
        (:func:`ldr.objectives.lmnn.chunk_targets`) and the recall is against the exact search
        over all rows.
    target_search_ : str
        How approximate targets were found (read where ``target_recall_`` is not None).

    Notes
    -----
    ``default_solver`` is ``["lbfgs", "trust-region"]``: L-BFGS (:class:`ldr.solvers.LBFGS`),
    whose certified answer ends the chain (:mod:`ldr.driver`), and the trust region, whose
    second-order steps certify the minimizer where L-BFGS ends uncertified (a budget or a
    stall).
    """

    method = Method("lmnn", "large-margin DML (LMNN, smoothed hinge, 3 target neighbours) on "
                    "R^{d×r}", supervised=True, memory=lmnn_memory)

    default_solver = ["lbfgs", "trust-region"]

    def __init__(self, X, y, r, n_neighbors=3, impostor_weight=1.0, smoothing=0.5,
                 start="auto", neighbors="auto", random_state=0, *, k="deprecated",
                 lam="deprecated", init="deprecated"):
        where = type(self).__name__
        start = renamed_value(where, "init", "start", init, start)
        n_neighbors = renamed_value(where, "k", "n_neighbors", k, n_neighbors)
        impostor_weight = renamed_value(where, "lam", "impostor_weight", lam, impostor_weight)
        super().__init__(X, y, r, start)
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral) \
                or n_neighbors < 1:
            raise ParameterError("n_neighbors", f"the number of target neighbours must be a "
                                 f"positive integer, got {n_neighbors!r}")
        for name, value in (("impostor_weight", impostor_weight), ("smoothing", smoothing)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                    not (np.isfinite(value) and value > 0):
                raise ParameterError(name, f"must be a positive number, got {value!r}")
        self.n_neighbors = int(n_neighbors)
        self.impostor_weight = float(impostor_weight)
        self.smoothing = float(smoothing)
        self._layout = None
        if self._rows is None:   # rows sorted by class: batches index them in that order
            order, self._blocks = class_blocks(self.codes_)
            xp = arrays.namespace(self._Xs)
            where = arrays.device(self._Xs)
            self._Xo = xp.take(self._Xs, xp.asarray(order, device=where), axis=0)
            self._zo = xp.asarray(self.codes_[order], device=where)   # in the rows' namespace
            T, v, self.target_recall_ = self._target_layout(neighbors, random_state)
            self.target_search_ = "NN-descent class by class, pynndescent"
            self._layout = (T, v, order)
            self._batch_targets = (T, v)
            # the targets as indices into X's rows, row by row in X's order (position:
            # order's inverse)
            position = xp.asarray(np.argsort(order), device=where)
            by_row = xp.reshape(xp.take(T, position, axis=0), (-1,))
            self.targets_ = xp.reshape(xp.take(xp.asarray(order, device=where), by_row),
                                       T.shape)
            self.target_mask_ = xp.take(v, position, axis=0) != 0
        else:                    # rows read a chunk at a time: in their own order
            found = self._chunk_targets(neighbors, random_state)
            self.targets_, self.target_mask_, self.target_recall_ = found
            self.target_search_ = "each row's nearest classmates in its chunk"
            self._Xo = None
            self._zo = self.codes_
            self._batch_targets = (self.targets_, self.target_mask_.astype(float))
        self._Xs = None   # the class-sorted copy is the objective's one copy of the rows

    @property
    def impostor_mask_(self) -> np.ndarray:
        """The n×n mask of other-class pairs, the candidate impostors (formed on request)."""
        return ~self.same_class_

    def _target_layout(self, neighbors, random_state) -> tuple:
        """(T, v, recall or None): each sample's k nearest classmates in the input space,
        exact or approximate by ``neighbors`` (class docstring), as positions in class order
        (n×k, in the rows' namespace: a class's block of sorted rows is searched alone) and
        their validity (n×k floats, 0 on the slots a class of m ≤ k samples leaves empty,
        which hold the sample itself)."""
        xp = arrays.namespace(self._Xo)
        where = arrays.device(self._Xo)
        k = self.n_neighbors
        sizes = np.asarray([b.stop - b.start for b in self._blocks], dtype=float)
        # "auto" decides on the exact search's pairs Σ n_c², as one set of √(Σ n_c²) rows
        method = resolve_neighbors(neighbors, int(np.sqrt(np.sum(sizes**2))))
        if arrays.foreign(self._Xo) is not None:   # exact on the device at any n (or refused)
            method = neighbors
        T = []
        v = []
        found = []
        for b in self._blocks:
            size = b.stop - b.start
            m = max(min(k, size - 1), 0)
            own = xp.arange(b.start, b.stop, device=where)[:, None]
            cols = [own + xp.zeros((1, k - m), dtype=own.dtype, device=where)] if m < k else []
            if m >= 1:
                nbr, search = nearest_neighbors(self._Xo[b.start:b.stop, :], m, method,
                                                random_state)
                cols.insert(0, xp.astype(nbr, own.dtype) + b.start)
                if search.recall is not None:
                    found.append((search.recall, size))
            T.append(xp.concat(cols, axis=1))
            slots = xp.asarray([1.0] * m + [0.0] * (k - m), dtype=self._Xo.dtype,
                               device=where)
            v.append(xp.zeros((size, 1), dtype=self._Xo.dtype, device=where) + slots)
        recall = None
        if found:
            recall = float(np.average([f[0] for f in found], weights=[f[1] for f in found]))
        return xp.concat(T, axis=0), xp.concat(v, axis=0), recall

    def _chunk_targets(self, neighbors, random_state) -> tuple:
        """(n×k indices, n×k validity, recall) for rows read a chunk at a time
        (:func:`chunk_targets`); "exact" is refused: it needs every class's rows at once."""
        if neighbors == "exact":
            raise ParameterError("neighbors", "rows read a chunk at a time (a Dask array or "
                                 "memmap) search each row's target neighbours in its chunk; "
                                 "for the exact search over all rows, pass the rows in memory "
                                 "(np.asarray(X))")
        return chunk_targets(self._rows, self.codes_, self.n_neighbors, neighbors,
                             random_state)

    def _class_layout(self, order: np.ndarray) -> tuple:
        """(targets, validity, order): the targets as positions in class order (the exact
        strips' layout, ``order`` the rows' class order)."""
        position = np.empty_like(order)
        position[order] = np.arange(order.shape[0])
        return (position[self.targets_[order]], self.target_mask_[order].astype(float), order)

    def _sorted_codes(self) -> np.ndarray:
        return self._zo

    def batch(self, M, indices):
        """The samples' terms f_i of (M1) and their gradient, term i the i-th sample (in class
        order for rows in memory, in their own order for rows read a chunk at a time): exact
        (every impostor column, O(b·k·n) memory), or after :meth:`sample_batches` the unbiased
        estimate (M3) from candidate sets."""
        idx = np.asarray(indices, dtype=np.intp)
        T, v = self._batch_targets
        if self._rows is not None:
            if self._cand is None:
                raise ParameterError("indices", "rows read a chunk at a time (a Dask array or "
                                     "memmap) take sampled batches: call sample_batches() "
                                     "first")
            rows = self._cand.rows(idx, M)
            XT = self._cand.take(idx, T[idx], M)
            vi = v[idx]
        else:
            X = self._Xo
            xp = arrays.namespace(X)
            at = xp.asarray(idx, device=arrays.device(X))
            cand = self._cand or Candidates(self.n_samples, 0, self.n_samples)
            rows = cand.rows(X, self._zo, idx, M)
            XT = xp.take(X, xp.reshape(xp.take(T, at, axis=0), (-1,)), axis=0)
            vi = xp.take(v, at, axis=0)
        return large_margin_sampled(rows, XT, vi, M, self.impostor_weight, self.smoothing)

    def _strips(self) -> tuple:
        """(targets, validity, order, blocks) of the exact strips: rows in class order (for
        rows read a chunk at a time, the layout is built at the first exact evaluation)."""
        if self._layout is None:
            order, self._blocks = class_blocks(self.codes_)
            self._layout = self._class_layout(order)
        return (*self._layout, self._blocks)

    def _in_class_order(self, A: np.ndarray, order: np.ndarray) -> np.ndarray:
        """An n×r array of the rows' embedding in class order (rows in memory already are)."""
        return A if self._rows is None else A[order]

    def _from_class_order(self, A: np.ndarray, order: np.ndarray) -> np.ndarray:
        if self._rows is None:
            return A
        out = np.empty_like(A)
        out[order] = A
        return out

    def _state(self, M) -> dict:
        key = self._point_key(M)
        if key == self._cache_key:
            return self._cache
        T, v, order, blocks = self._strips()
        cost, GU = large_margin(self._in_class_order(self._embed(M), order), T, v, blocks,
                                self.impostor_weight, self.smoothing)
        self._cache_key = key
        self._cache = {"cost": cost, "GU": self._from_class_order(GU, order)}
        return self._cache

    def cost(self, M) -> float:
        return self._state(M)["cost"]

    def egrad(self, M) -> np.ndarray:
        return self._tdot(self._state(M)["GU"])

    def ehvp(self, M, V) -> np.ndarray:
        T, v, order, blocks = self._strips()
        H = large_margin(self._in_class_order(self._embed(M), order), T, v, blocks,
                         self.impostor_weight, self.smoothing,
                         dU=self._in_class_order(self._embed(V), order))
        return self._tdot(self._from_class_order(H, order))
