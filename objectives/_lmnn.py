"""The large-margin cost (:class:`ldr.objectives.LargeMarginDML`), its gradient and Hessian,
by strips of rows: no n×n array is ever stored.

Rows are sorted by class, so a sample's classmates are one block of columns.  For a strip of
rows s the squared distances D_s = (‖u_i − u_ℓ‖²) are formed with +∞ on the classmates'
columns (never impostors), and for each target slot t (target T_it, distance d_it, validity
v_it ∈ {0, 1}) the hinge arguments z = 1 + d_it − D_iℓ, with the Huberized hinge

    h(z) = c²/(2δ) + (z⁺ − c),   h′(z) = c/δ,   h″(z) = 1[0 < z < δ]/δ,   c = min(z⁺, δ)

(z = −∞ on the classmates' columns costs and weighs nothing).  With W the weights of
∂f/∂D — impostor pairs W_iℓ = −λ Σ_t v_it h′(z_itℓ), target pairs W_{i,T_it} =
v_it (1 + λ Σ_ℓ h′(z_itℓ)) —

    f = Σ_it v_it (d_it + λ Σ_ℓ h(z_itℓ)),      ∂f/∂U = 2 Lap(W + Wᵀ) U               (M1)

and the Hessian along dU differentiates W once more (dz = dd_it − dD_iℓ):

    d(∂f/∂U) = 2 Lap(dW + dWᵀ) U + 2 Lap(W + Wᵀ) dU                                     (M2)

The impostor part of each Laplacian product, diag(W1 + Wᵀ1) V − W V − WᵀV, is accumulated
strip by strip; the target part (n·k pairs) is a scatter.
"""

from __future__ import annotations

import numpy as np

from ldr.objectives._pairwise import strip_rows


def target_distances(U: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u_i − u_{T_it}) as an (n, k, r) array and d_it = its squared norms."""
    diff = U[:, None, :] - U[T]
    return diff, np.einsum("ikr,ikr->ik", diff, diff)


def _pair_laplacian(diff: np.ndarray, w: np.ndarray, T: np.ndarray, n: int) -> np.ndarray:
    """Lap(W + Wᵀ) U for W supported on the target pairs (i, T_it) with weights w_it:
    w_it (u_i − u_T) added to row i and subtracted from row T_it."""
    wd = w[:, :, None] * diff
    out = wd.sum(axis=1)
    for col in range(out.shape[1]):
        out[:, col] -= np.bincount(T.ravel(), weights=wd[:, :, col].ravel(), minlength=n)
    return out


def _classmates_at_infinity(D: np.ndarray, i0: int, i1: int, blocks: list[slice]) -> None:
    """Set D[i − i0, classmates of i] = +∞ for the rows i of the strip [i0, i1)."""
    for b in blocks:
        lo, hi = max(b.start, i0), min(b.stop, i1)
        if lo < hi:
            D[lo - i0:hi - i0, b] = np.inf


def large_margin(U: np.ndarray, T: np.ndarray, v: np.ndarray, blocks: list[slice], lam: float,
                 delta: float, dU: np.ndarray | None = None):
    """(f, ∂f/∂U) of (M1), or, with ``dU``, the Hessian along dU of (M2), for U with rows
    sorted by class (``blocks`` the class slices), targets T (n×k) and validity v (n×k)."""
    n, r = U.shape
    k = T.shape[1]
    sq = np.einsum("ij,ij->i", U, U)
    diff, d = target_distances(U, T)
    hessian = dU is not None
    if hessian:
        dsq = np.einsum("ij,ij->i", U, dU)
        ddiff = dU[:, None, :] - dU[T]
        dd = 2.0 * np.einsum("ikr,ikr->ik", diff, ddiff)
    cost = float(np.sum(v * d))
    hp_sum = np.zeros((n, k))     # Σ_ℓ h′(z_itℓ)
    hpp_sum = np.zeros((n, k))    # Σ_ℓ h″(z_itℓ) dz_itℓ (Hessian)
    # impostor parts of Lap(W + Wᵀ) V (V = U, or dU for the Hessian) and Lap(dW + dWᵀ) U
    V = dU if hessian else U
    lap = np.zeros((n, r))
    col_w = np.zeros(n)
    dlap = np.zeros((n, r))
    col_dw = np.zeros(n)
    step = strip_rows(n)
    buf = np.empty((min(step, n), n))
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        s = slice(i0, i1)
        D = buf[: i1 - i0]
        np.matmul(U[s], U.T, out=D)
        D *= -2.0
        D += sq
        D += sq[s, None]
        _classmates_at_infinity(D, i0, i1, blocks)
        W = np.zeros_like(D)
        if hessian:
            dD = np.matmul(U[s], dU.T) + np.matmul(dU[s], U.T)
            dD *= -2.0
            dD += 2.0 * dsq
            dD += 2.0 * dsq[s, None]
            dW = np.zeros_like(D)
        for t in range(k):
            vt = v[s, t]
            if not vt.any():
                continue
            Z = (1.0 + d[s, t])[:, None] - D            # −∞ on the classmates' columns
            np.maximum(Z, 0.0, out=Z)                    # z⁺
            c = np.minimum(Z, delta)
            if not hessian:
                h_rows = (np.einsum("ij,ij->i", c, c) / (2.0 * delta) + Z.sum(axis=1)
                          - c.sum(axis=1))
                cost += lam * float(vt @ h_rows)
            hp_sum[s, t] = c.sum(axis=1) / delta
            W -= (lam / delta) * vt[:, None] * c
            if hessian:
                band = (Z > 0.0) & (Z < delta)
                G = (dd[s, t][:, None] - dD) * band      # h″ dz · δ
                hpp_sum[s, t] = G.sum(axis=1) / delta
                dW -= (lam / delta) * vt[:, None] * G
        lap[s] += W.sum(axis=1)[:, None] * V[s] - W @ V
        col_w += W.sum(axis=0)
        lap -= W.T @ V[s]
        if hessian:
            dlap[s] += dW.sum(axis=1)[:, None] * U[s] - dW @ U
            col_dw += dW.sum(axis=0)
            dlap -= dW.T @ U[s]
    lap += col_w[:, None] * V
    w_tgt = v * (1.0 + lam * hp_sum)
    if not hessian:
        return cost, 2.0 * (lap + _pair_laplacian(diff, w_tgt, T, n))
    dlap += col_dw[:, None] * U
    dw_tgt = lam * v * hpp_sum
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


def large_margin_sampled(X: np.ndarray, z: np.ndarray, T: np.ndarray, v: np.ndarray,
                         M: np.ndarray, idx: np.ndarray, cand, lam: float, delta: float):
    """The batch I's terms of (M1), f_i = Σ_t v_it (d_it + λ Σ_ℓ h(1 + d_it − D_iℓ)), and
    their gradient in M, the impostors ℓ (z_ℓ ≠ z_i) taken from i's candidates
    (``objectives/_candidates.py``, C1: the neighbours N_i with weight 1, the sampled
    columns with n/m):

        f̂_i = Σ_t v_it (d_it + λ Σ_ℓ w_iℓ h(z_itℓ)),   ∂f̂_i/∂d_it = v_it (1 + λ Σ_ℓ w_iℓ h′),
        ∂f̂_i/∂D_iℓ = −λ w_iℓ Σ_t v_it h′(z_itℓ)                                        (M3)

    an unbiased estimate of f_i and of its gradient (f_i is linear in the sums over ℓ);
    exact when m ≥ n.  O(b·k·(K + m)) time and memory."""
    from ldr.objectives._candidates import block_sqdist, gathered_sqdist, pair_gradient

    idx = np.asarray(idx, dtype=np.intp)
    b, r = idx.shape[0], M.shape[1]
    UI = X[idx] @ M
    N = cand.neighbours(idx, lambda: X @ M)
    R = cand.columns(idx)
    Ti, vi = T[idx], v[idx]
    UT = (X[Ti.ravel()] @ M).reshape(b, Ti.shape[1], r)
    UN = (X[N.ravel()] @ M).reshape(b, N.shape[1], r)
    UR = X[R] @ M
    du_t, d = gathered_sqdist(UI, UT)
    du_n, Dn = gathered_sqdist(UI, UN)
    Df = block_sqdist(UI, UR)
    zi = z[idx, None]
    wn = (z[N] != zi).astype(float)
    wf = cand.far_weights(idx, N, R) * (z[R][None, :] != zi)
    cost = float(np.sum(vi * d))
    hp_t = np.zeros_like(d)                     # Σ_ℓ w h′ per target slot
    Wn, Wf = np.zeros_like(Dn), np.zeros_like(Df)
    for D, w, W in ((Dn, wn, Wn), (Df, wf, Wf)):
        if D.shape[1] == 0:
            continue
        Z = 1.0 + d[:, :, None] - D[:, None, :]      # b×k×(K or m)
        c = np.clip(Z, 0.0, delta)
        h = c * c / (2.0 * delta) + np.maximum(Z - delta, 0.0)
        hp = c / delta
        cost += lam * float(np.einsum("it,itl,il->", vi, h, w))
        hp_t += np.einsum("itl,il->it", hp, w)
        W -= lam * w * np.einsum("it,itl->il", vi, hp)
    Wt = vi * (1.0 + lam * hp_t)
    return cost, pair_gradient(X, idx, UI, [(Ti, du_t, Wt), (N, du_n, Wn)], R, UR, Wf)
