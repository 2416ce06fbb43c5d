"""Pairwise kernels of the metric-learning objectives (:mod:`ldr.objectives.nca`,
:mod:`ldr.objectives.lmnn`).

Every evaluation of NCA or the large-margin cost works on n×n arrays; these helpers make each
evaluation a few passes over one such array.

**NCA's softmax without P** (:func:`nca_softmax`, :func:`nca_laplacian_times`).  With the
rows sorted by class (so that the same-class pairs are the diagonal blocks), D_ij =
‖u_i − u_j‖² (D_ii = ∞) and m_i = min_j D_ij, write h_i = m_i/2 and

    K_ij = exp(−(D_ij − h_i − h_j)),   w_j = exp(−(h_j − min_k h_k)),   s = K w,
    p_ij = K_ij w_j / s_i                                                         (P1)

which is the row-wise softmax of −D (the factors exp(−h_i) cancel in each row).  K is
**symmetric** and ≤ 1 (D_ij ≥ max(m_i, m_j) ≥ h_i + h_j), so only its upper triangle is
exponentiated — the exponential is most of an evaluation's time — and the row sums never
overflow; the smallest s_i is exp(−(max h − min h)), so this form is used while that spread
is below :data:`SPREAD` and the plain row-stabilized softmax K_ij = exp(−(D_ij − m_i)), w = 1
otherwise.  Splitting each row into its own class's block (blk) and the rest (off),

    p_i = (K_blk w)_i / s_i,   q_i = 1 − p_i = (K_off w)_i / s_i,   s = K_blk w + K_off w

with q summed directly (not as 1 − p, which cancels where p_i ≈ 1, as on separable data).  The
gradient of f = Σ_i p_i needs no n×n product either: with A_ij = p_ij (p_i − 1[z_i = z_j]),
whose rows sum to 0, a = p/s and b = q/s,

    A V   = a ∘ K_off(w ∘ V) − b ∘ K_blk(w ∘ V)
    AᵀV   = w ∘ (K_offᵀ(a ∘ V) − K_blkᵀ(b ∘ V))                                  (P2)
    ∂f/∂U = 2 (diag(Aᵀ1) U − A U − AᵀU)

which reads each entry of K once (for a symmetric K, against 2r + 1 columns).
"""

from __future__ import annotations

import numpy as np

from ldr.data import arrays

__all__ = ["CLIP", "MASKED_EXP_BELOW", "SMALL", "SPREAD", "STRIP_ENTRIES", "WIDE",
           "class_blocks", "ddist", "exp_neg", "nca_laplacian_times", "nca_probabilities",
           "nca_small", "nca_softmax", "nearest_sqdist", "same_class_mask", "softmax_kernel",
           "strip_rows", "sym_laplacian_times", "with_own_columns"]

#: largest spread max h − min h (in squared-distance units) for the symmetric form (P1):
#: e^−600 ≈ 1e−261 keeps every row sum a normal double
SPREAD = 600.0
#: from this many columns of U on, D is formed by one product and the gradient by one product
#: with S = A + Aᵀ (the products, not the passes over n×n arrays, dominate there)
WIDE = 8
#: entries per strip of rows (512 KB: a strip stays in cache while it is worked on)
STRIP_ENTRIES = 2**16
#: up to this many rows (and fewer than :data:`WIDE` columns) NCA's softmax is the plain
#: row-stabilized one over the whole n×n array with a same-class mask (:func:`nca_small`):
#: a dozen NumPy calls, where the symmetric form's strips, mirror and class blocks cost more
#: in dispatch than they save in exponentials.  The bound keeps each of the plain form's
#: four n×n float64 arrays (8 · 120² bytes) below glibc's 128 KiB threshold for allocating
#: by mmap, past which every call page-faults and the plain form loses its advantage
SMALL = 120


def strip_rows(n: int) -> int:
    """Rows per strip of an n-column array: :data:`STRIP_ENTRIES` / n, at least 32 (one strip
    for small n, where the Python overhead of many strips would dominate)."""
    return max(32, STRIP_ENTRIES // max(n, 1))


#: exponents at or past CLIP are not exponentiated, the entry is 0 (:func:`exp_neg`): it would
#: be at most e^−700 ≈ 1e−304 (×e^SPREAD in the symmetric form), far below the rounding of
#: any p_i, and results that underflow take the exponential's slow path
CLIP = 700.0


#: :func:`exp_neg` exponentiates by a mask when at most this share of the entries is below
#: CLIP, else all of them (the masked call's runs cost more than they save)
MASKED_EXP_BELOW = 0.6


def exp_neg(S, keep: np.ndarray | None = None):
    """exp(−S), 0 where S ≥ :data:`CLIP` (the diagonal's +∞ too), in S's namespace.  For NumPy
    S is overwritten (``keep``: a boolean buffer of S's shape, allocated when None), and where
    at most :data:`MASKED_EXP_BELOW` of S is below CLIP only those entries are exponentiated
    (a masked ufunc call, which works on runs of kept entries), else all and the rest zeroed
    after: the entries past it were e^−700 ≈ 1e−304, which no sum of normal magnitude feels,
    and late in a fit (a large map) they are most of the entries, while the exponential is
    most of an evaluation's time and e^−700 takes its slow path.  Other namespaces get a new
    array (the array API has no ``out=``)."""
    if not arrays.numpy_fast_path(S):
        xp = arrays.namespace(S)
        below = S < CLIP
        return xp.where(below, xp.exp(-xp.where(below, S, 0.0)), 0.0)
    if keep is None:
        keep = np.empty(S.shape, dtype=bool)
    np.less(S, CLIP, out=keep)
    np.minimum(S, CLIP, out=S)       # finite everywhere: the product below makes no NaN
    np.negative(S, out=S)
    if np.count_nonzero(keep) > MASKED_EXP_BELOW * keep.size:   # few past CLIP: plain exp
        np.exp(S, out=S)
    else:
        np.exp(S, out=S, where=keep)
    np.multiply(S, keep, out=S)
    return S


def with_own_columns(D, at: np.ndarray, value: float):
    """D with D[i, at[i]] = ``value`` for every row i (a strip's or a batch's own column of
    each row, ``at`` host indices), in D's namespace: written in place for NumPy, a new array
    elsewhere (the array API has no integer-array assignment)."""
    if arrays.numpy_fast_path(D):
        D[np.arange(D.shape[0]), at] = value
        return D
    xp = arrays.namespace(D)
    where = arrays.device(D)
    cols = xp.arange(D.shape[1], device=where)
    own = xp.asarray(np.asarray(at, dtype=np.int64), device=where)
    return xp.where(cols[None, :] == own[:, None], value, D)


def sym_laplacian_times(A: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Lap(A + Aᵀ) U without forming A + Aᵀ (two products with A instead of a transpose)."""
    return (A.sum(axis=1) + A.sum(axis=0))[:, None] * U - A @ U - A.T @ U


def ddist(U: np.ndarray, dU: np.ndarray) -> np.ndarray:
    """dD_ij = 2 (u_i − u_j)ᵀ(du_i − du_j), the directional derivative of :func:`sqdist`."""
    a = np.sum(U * dU, axis=1)
    dD = np.hstack([U, dU]) @ np.hstack([dU, U]).T  # B + Bᵀ, B = U dUᵀ, in one product
    dD -= a[:, None]
    dD -= a[None, :]
    dD *= -2.0
    return dD


def _strip(U: np.ndarray, c: np.ndarray, i0: int, i1: int, j0: int, out: np.ndarray):
    """out ← c_i + c_j − 2⟨u_i, u_j⟩ for i in [i0, i1), j ≥ j0 (D_ij when c = ‖u‖²)."""
    np.matmul(U[i0:i1], U[j0:].T, out=out)
    out *= -2.0
    out += c[j0:]
    out += c[i0:i1, None]
    return out


def nearest_sqdist(U: np.ndarray, sq: np.ndarray, index: bool = False):
    """m_i = min_{j≠i} ‖u_i − u_j‖², by strips of rows (no n×n array); with ``index``,
    ``(m, j)``: also the j attaining each minimum (each row's nearest other row)."""
    n = U.shape[0]
    m = np.empty(n)
    j = np.empty(n, dtype=np.intp)
    step = strip_rows(n)
    buf = np.empty((min(step, n), n))
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        rows = np.arange(i1 - i0)
        S = _strip(U, sq, i0, i1, 0, buf[: i1 - i0])
        S[rows, rows + i0] = np.inf
        S.argmin(axis=1, out=j[i0:i1])
        m[i0:i1] = S[rows, j[i0:i1]]
    return (m, j) if index else m


def softmax_kernel(U: np.ndarray, sq: np.ndarray, h: np.ndarray, symmetric: bool):
    """K of (P1), by strips of :func:`strip_rows` rows, each formed and exponentiated while it
    is in cache: symmetric, K_ij = exp(−(D_ij − h_i − h_j)) on the upper triangle only,
    mirrored into the lower one; else K_ij = exp(−(D_ij − 2h_i)); 0 past :data:`CLIP`
    (:func:`exp_neg`), and K_ii = 0."""
    n = U.shape[0]
    K = np.empty((n, n))
    c = sq - h if symmetric else sq
    step = strip_rows(n)
    keep = np.empty((min(step, n), n), dtype=bool)
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        j0 = i0 if symmetric else 0
        S = _strip(U, c, i0, i1, j0, K[i0:i1, j0:])
        if symmetric:
            S[np.arange(i1 - i0), np.arange(i1 - i0)] = CLIP
        else:
            S -= 2.0 * h[i0:i1, None]
            S[np.arange(i1 - i0), np.arange(i0, i1)] = CLIP
        exp_neg(S, keep[: i1 - i0, : n - j0])
        if symmetric:
            K[i1:, i0:i1] = K[i0:i1, i1:].T
    np.fill_diagonal(K, 0.0)  # p_ii = 0
    return K


def class_blocks(codes: np.ndarray) -> tuple[np.ndarray, list[slice]]:
    """The permutation sorting ``codes`` (stable) and the slice of each class in that order."""
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes)
    ends = np.cumsum(counts)
    return order, [slice(int(e - c), int(e)) for c, e in zip(counts, ends) if c > 0]


def same_class_mask(blocks: list[slice], n: int) -> np.ndarray:
    """The n×n mask of same-class pairs for rows sorted by class (its diagonal blocks), as
    0/1 floats (a float product is faster than a boolean one)."""
    same = np.zeros((n, n))
    for b in blocks:
        same[b, b] = 1.0
    return same


def nca_small(U: np.ndarray, same: np.ndarray) -> dict:
    """The state of :func:`nca_softmax` by the plain row-stabilized softmax (w = 1): with
    D_ii = ∞ and m_i = min_j D_ij, K_ij = exp(−(D_ij − m_i)) (0 past :data:`CLIP`), s = K1,
    p_i = Σ_{j: z_j = z_i} K_ij / s_i and q_i = Σ_{j: z_j ≠ z_i} K_ij / s_i (q summed directly,
    as in (P1)); ``same`` is the same-class mask as 0/1 floats (:func:`same_class_mask`)."""
    n = U.shape[0]
    K = _strip(U, np.einsum("ij,ij->i", U, U), 0, n, 0, np.empty((n, n)))   # D
    K.flat[:: n + 1] = np.inf
    nearest = K.argmin(axis=1)
    K -= K[np.arange(n), nearest][:, None]
    exp_neg(K, np.empty((n, n), dtype=bool))
    K.flat[:: n + 1] = 0.0
    s = K.sum(axis=1)
    blk = K * same          # K in the class blocks, 0 off them
    off = K - blk           # K off the blocks (exactly), 0 in them
    p = blk.sum(axis=1)
    q = off.sum(axis=1)
    p /= s
    q /= s
    return {"U": U, "K": K, "w": np.ones(n), "s": s, "p": p, "q": q, "symmetric": False,
            "nearest": nearest, "blk": blk, "off": off}


def nca_softmax(U: np.ndarray, blocks: list[slice], same: np.ndarray | None = None) -> dict:
    """K, w, s, p, whether K is symmetric and each row's nearest other row, for U = X M with
    rows sorted by class (P1); with the same-class mask ``same``, by :func:`nca_small`."""
    if same is not None:
        return nca_small(U, same)
    n, r = U.shape
    sq = np.einsum("ij,ij->i", U, U)
    if strip_rows(n) >= n or r >= WIDE:   # form D once (one product), then K in place
        K = _strip(U, sq, 0, n, 0, np.empty((n, n)))
        K.flat[:: n + 1] = np.inf   # np.fill_diagonal, without its argument handling
        nearest = K.argmin(axis=1)
        h = 0.5 * K[np.arange(n), nearest]
        low = h.min()
        symmetric = bool(h.max() - low <= SPREAD)   # np.ptp(h), without its dispatch
        K -= h[:, None]
        K -= h if symmetric else h[:, None]
        step = min(strip_rows(n), -(-n // 4))   # by strips (at least four): a strip's mask
        keep = np.empty((min(step, n), n), dtype=bool)
        for i0 in range(0, n, step):
            i1 = min(i0 + step, n)
            if symmetric:  # the upper triangle, mirrored
                exp_neg(K[i0:i1, i0:], keep[: i1 - i0, : n - i0])
                K[i1:, i0:i1] = K[i0:i1, i1:].T
            else:
                exp_neg(K[i0:i1], keep[: i1 - i0])
        K.flat[:: n + 1] = 0.0
    else:
        m, nearest = nearest_sqdist(U, sq, index=True)
        h = 0.5 * m
        low = h.min()
        symmetric = bool(h.max() - low <= SPREAD)
        K = softmax_kernel(U, sq, h, symmetric)
    w = np.exp(low - h) if symmetric else np.ones_like(h)
    same, other = _split_products(K, w[:, None], w[:, None], blocks)
    same, other = same[:, 0], other[:, 0]
    s = same + other
    return {"U": U, "K": K, "w": w, "s": s, "p": same / s, "q": other / s,
            "symmetric": symmetric, "nearest": nearest}


def _split_products(K: np.ndarray, R_same: np.ndarray, R_other: np.ndarray,
                    blocks: list[slice]) -> tuple[np.ndarray, np.ndarray]:
    """(K_blk R_same, K_off R_other): K's diagonal blocks and the rest, each entry of K read
    once, the off-block part summed directly (not as a difference, which would cancel)."""
    same = np.empty((K.shape[0], R_same.shape[1]))
    other = np.empty((K.shape[0], R_other.shape[1]))
    n = K.shape[1]
    for b in blocks:
        same[b] = K[b, b] @ R_same[b]
        if b.start == 0:      # the first class: nothing to its left (no empty product)
            other[b] = K[b, b.stop:] @ R_other[b.stop:]
        elif b.stop == n:     # the last: nothing to its right
            other[b] = K[b, :b.start] @ R_other[:b.start]
        else:
            other[b] = K[b, :b.start] @ R_other[:b.start] + K[b, b.stop:] @ R_other[b.stop:]
    return same, other


def nca_laplacian_times(st: dict, V: np.ndarray, blocks: list[slice]) -> np.ndarray:
    """Lap(A + Aᵀ) V = diag(Aᵀ1) V − A V − AᵀV at the state of :func:`nca_softmax` (P2);
    ∂(Σ_i p_i)/∂U is twice this at V = U."""
    K = st["K"]
    w = st["w"]
    s = st["s"]
    p = st["p"]
    q = st["q"]
    r = V.shape[1]
    if "blk" in st:   # nca_small's state: A_ij = K_ij (a_i off the blocks, −b_i in them)
        if "A" not in st:
            A = st["off"] * (p / s)[:, None]
            A -= st["blk"] * (q / s)[:, None]
            st["A"] = A
        A = st["A"]
        return A.sum(axis=0)[:, None] * V - A @ V - A.T @ V
    if r >= WIDE:   # many columns: S = A + Aᵀ formed once, then one product with V
        S = _symmetrized_weights(st, blocks)
        return S.sum(axis=1)[:, None] * V - S @ V
    a = (p / s)[:, None]
    b = (q / s)[:, None]
    wV = w[:, None] * V
    if st["symmetric"]:   # one pass: K_blk (wV, b∘V, b) and K_off (wV, a∘V, a)
        blk, off = _split_products(K, np.concatenate((wV, b * V, b), axis=1),
                                   np.concatenate((wV, a * V, a), axis=1), blocks)
        blk_w = blk[:, :r]
        off_w = off[:, :r]
        blk_t = blk[:, r:]
        off_t = off[:, r:]
    else:
        blk_w, off_w = _split_products(K, wV, wV, blocks)
        blk_t, off_t = _split_products(K.T, np.hstack([b * V, b]), np.hstack([a * V, a]),
                                       blocks)
    AV = a * off_w - b * blk_w
    AtV = w[:, None] * (off_t - blk_t)          # (AᵀV, Aᵀ1)
    return AtV[:, r:] * V - AV - AtV[:, :r]


def _symmetrized_weights(st: dict, blocks: list[slice]) -> np.ndarray:
    """S = A + Aᵀ, A_ij = p_ij p_i off the class blocks and −p_ij q_i in them (P2), formed once
    per point (cached in ``st``)."""
    if "S" not in st:
        K = st["K"]
        w = st["w"]
        a = st["p"] / st["s"]
        b = st["q"] / st["s"]
        A = K * a[:, None]
        A *= w
        for c in blocks:
            A[c, c] = K[c, c] * (-b[c, None] * w[c])
        A += A.T
        st["S"] = A
    return st["S"]


def nca_probabilities(st: dict) -> np.ndarray:
    """P = (p_ij), formed from the state of :func:`nca_softmax` (for the Hessian)."""
    if "P" not in st:
        st["P"] = st["K"] * st["w"][None, :] / st["s"][:, None]
    return st["P"]
