"""Entropic optimal transport for WDA, by hand: Sinkhorn's plan between two point clouds, in
the scaling form and in the log domain, its derivatives through the iterations (forward mode
for Hessian-vector products), and the pair scatter C = Σ_ij T_ij (x_i − x_j)(x_i − x_j)ᵀ that
WDA's cost and pencil are made of (:mod:`ldr.objectives.wda`).

POT's convention throughout: K = exp(−M/reg) for the cost matrix M of squared distances, a
fixed number of iterations from u = 1, uniform marginals.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from ldr.kernels import beta


def _value(x):
    return getattr(x, "_value", x)


_SCALING_MAX = 1e50


def sinkhorn(M, reg: float, n_iter: int):
    """Entropic transport plan with uniform marginals after ``n_iter`` Sinkhorn iterations
    from u = 1 (autograd-traceable).

    The scaling form v = b/(Kᵀu), u = a/(Kv), T = diag(u) K diag(v) is used when it stays
    finite with moderate u, v (matrix-vector products: fast); otherwise (small ``reg``: K
    underflows, u and v overflow) the identical iteration runs in the log domain.  Both give
    the same T.
    """
    n, m = M.shape
    K = anp.exp(-M / reg)
    Kv = _value(K)
    if Kv.sum(axis=0).min() > 1e-200 and Kv.sum(axis=1).min() > 1e-200:
        a, b = 1.0 / n, 1.0 / m
        u = anp.ones(n)
        for _ in range(n_iter):
            v = b / anp.dot(u, K)
            u = a / anp.dot(K, v)
        T = u[:, None] * K * v[None, :]
        if np.all(np.isfinite(_value(T))) and _moderate(_value(u), _value(v)):
            return T
    return sinkhorn_log(M, reg, n_iter)


def _moderate(u: np.ndarray, v: np.ndarray) -> bool:
    """Whether the scalings are small enough for the reverse pass (which multiplies by u², v²)
    to stay finite; otherwise the log domain is used."""
    return bool(np.max(u) < _SCALING_MAX and np.max(v) < _SCALING_MAX)


def sinkhorn_log(M, reg: float, n_iter: int):
    """Entropic transport plan with uniform marginals by ``n_iter`` log-domain Sinkhorn
    iterations (autograd-traceable): T = diag(e^f) exp(−M/reg) diag(e^g)."""
    from autograd.scipy.special import logsumexp  # imports scipy.stats: only when needed

    n, m = M.shape
    S = -M / reg
    loga, logb = -np.log(n), -np.log(m)
    f = anp.zeros(n)
    g = anp.zeros(m)
    for _ in range(n_iter):
        g = logb - logsumexp(S + f[:, None], axis=0)
        f = loga - logsumexp(S + g[None, :], axis=1)
    return anp.exp(S + f[:, None] + g[None, :])


def _kernel(Ya: np.ndarray, Yb: np.ndarray, reg: float) -> np.ndarray:
    """K = exp(−M/reg) for M_ij = ‖ya_i − yb_j‖² = ‖ya_i‖² + ‖yb_j‖² − 2 ya_iᵀyb_j, as one
    product of an (n, p+2) and a (p+2, m) factor and one in-place exp (no other n×m passes).
    Rounding can leave M_ij ≈ −1e-16·‖y‖², i.e. K_ij = 1 + O(1e-16/reg): harmless."""
    sa = np.einsum("ij,ij->i", Ya, Ya)
    sb = np.einsum("ij,ij->i", Yb, Yb)
    left = np.column_stack([Ya * (2.0 / reg), sa * (-1.0 / reg), np.ones(len(Ya))])
    right = np.column_stack([Yb, np.ones(len(Yb)), sb * (-1.0 / reg)])
    K = left @ right.T
    return np.exp(K, out=K)


def _sinkhorn_scalings(K: np.ndarray, n_iter: int):
    """:func:`sinkhorn`'s scaling form on plain arrays: ``(u, v, r, c)`` with the plan
    T = diag(u) K diag(v) left unformed, its row sums r (= 1/n to rounding: the last update
    is u's) and column sums c; ``None`` when a scaling is not finite and positive (then the
    log domain is needed).  The first half-iteration, from u = 1, uses K's column sums."""
    n, m = K.shape
    a, b = 1.0 / n, 1.0 / m
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        v = b / K.sum(axis=0)
        Kv = K @ v
        u = a / Kv
        for _ in range(n_iter - 1):
            v = b / (u @ K)
            Kv = K @ v
            u = a / Kv
        ok = all(np.all(np.isfinite(x)) and x.min() > 0 for x in (u, v))
        return (u, v, u * Kv, v * (u @ K)) if ok else None


def _scaled_kernel(Ya: np.ndarray, Yb: np.ndarray, reg: float, n_iter: int):
    """``(K, scalings)``: :func:`_kernel` and :func:`_sinkhorn_scalings` on it."""
    K = _kernel(Ya, Yb, reg)
    return K, _sinkhorn_scalings(K, n_iter)


def plan(Ya: np.ndarray, Yb: np.ndarray, reg: float, n_iter: int,
          scaled=None) -> np.ndarray:
    """The plan T of :func:`sinkhorn` between the rows of Ya and Yb, on plain arrays
    (``scaled``: their :func:`_scaled_kernel`, if already computed; K is overwritten)."""
    K, scalings = scaled if scaled is not None else _scaled_kernel(Ya, Yb, reg, n_iter)
    if scalings is not None:
        u, v = scalings[:2]
        with np.errstate(over="ignore", under="ignore"):
            K *= u[:, None]
            K *= v[None, :]
        if np.all(np.isfinite(K)):
            return K
    return np.asarray(sinkhorn_log(beta("difference", Yb, Ya), reg, n_iter))


def sqdist(A, B):
    sa = anp.sum(A * A, axis=1)
    sb = anp.sum(B * B, axis=1)
    return anp.maximum(sa[:, None] + sb[None, :] - 2.0 * anp.dot(A, B.T), 0.0)


def transport_derivatives(Ya, Yb, Ya_dot, Yb_dot, reg: float, n_iter: int):
    """ℓ = ⟨T(M), M⟩ for M_ij = ‖ya_i − yb_j‖² and T = ``n_iter`` scaling Sinkhorn iterations
    from u = 1 (the iteration of :func:`sinkhorn`), by hand: returns ``(ℓ, W, ℓ̇, Ẇ)`` with
    W = dℓ/dM (reverse mode through the iterations) and ℓ̇, Ẇ their derivatives along
    Ẏ = (Ya_dot, Yb_dot) (forward mode through the reverse pass; ``None`` skips them), or
    ``None`` when the scaling form is not finite (then use the log domain and autograd).

    Forward, with a = 1/n, b = 1/m, K = exp(−M/reg):
        v_t = b / (Kᵀu_{t−1}),  u_t = a / (K v_t),  T = diag(u_N) K diag(v_N);
    reverse, from ū_N = (T∘M)1/u_N, v̄_N = (T∘M)ᵀ1/v_N, for t = N, …, 1:
        s̄_t = −ū_t u_t²/a,  v̄_t += Kᵀs̄_t,  w̄_t = −v̄_t v_t²/b,  ū_{t−1} = K w̄_t,
    and W = T − (T∘M + K∘Σ_t (s̄_t v_tᵀ + u_{t−1} w̄_tᵀ))/reg.
    """
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = _transport_derivatives_unguarded(Ya, Yb, Ya_dot, Yb_dot, reg, n_iter)
    if out is None or not all(np.all(np.isfinite(x)) for x in out if x is not None):
        return None
    return out


def _transport_derivatives_unguarded(Ya, Yb, Ya_dot, Yb_dot, reg, n_iter):
    tangent = Ya_dot is not None
    n, m = Ya.shape[0], Yb.shape[0]
    a, b = 1.0 / n, 1.0 / m
    M = beta("difference", Yb, Ya)
    K = np.exp(M * (-1.0 / reg))
    if K.sum(axis=0).min() <= 1e-200 or K.sum(axis=1).min() <= 1e-200:
        return None
    if tangent:  # Ṁ_ij = 2 (ya_i − yb_j)ᵀ(ẏa_i − ẏb_j)
        M_dot = 2.0 * (np.einsum("ij,ij->i", Ya, Ya_dot)[:, None]
                       + np.einsum("ij,ij->i", Yb, Yb_dot)[None, :]
                       - Ya @ Yb_dot.T - Ya_dot @ Yb.T)
        K_dot = K * M_dot * (-1.0 / reg)
    us, vs = [np.ones(n)], []
    us_dot, vs_dot = [np.zeros(n)], []
    for _ in range(n_iter):
        vs.append(b / (us[-1] @ K))
        if tangent:
            w_dot = us[-1] @ K_dot + us_dot[-1] @ K
            vs_dot.append(-vs[-1] ** 2 * w_dot / b)
        us.append(a / (K @ vs[-1]))
        if tangent:
            s_dot = K_dot @ vs[-1] + K @ vs_dot[-1]
            us_dot.append(-us[-1] ** 2 * s_dot / a)
    u, v = us[-1], vs[-1]
    T = u[:, None] * K * v[None, :]
    if not (np.all(np.isfinite(T)) and _moderate(u, v)):
        return None
    TM = T * M
    loss = float(TM.sum())
    u_bar, v_bar = TM.sum(axis=1) / u, TM.sum(axis=0) / v
    if tangent:
        T_dot = T * (us_dot[-1][:, None] / u[:, None] + vs_dot[-1][None, :] / v[None, :]
                     - M_dot / reg)
        TM_dot = T_dot * M + T * M_dot
        loss_dot = float(TM_dot.sum())
        u_bar_dot = TM_dot.sum(axis=1) / u - u_bar * us_dot[-1] / u
        v_bar_dot = TM_dot.sum(axis=0) / v - v_bar * vs_dot[-1] / v
    left, right, left_dot, right_dot = [], [], [], []
    for t in range(n_iter, 0, -1):
        ut, vt, u_prev = us[t], vs[t - 1], us[t - 1]
        s_bar = -u_bar * ut * ut / a
        v_bar = v_bar + s_bar @ K
        w_bar = -v_bar * vt * vt / b
        left += [s_bar, u_prev]
        right += [vt, w_bar]
        if tangent:
            ut_dot, vt_dot = us_dot[t], vs_dot[t - 1]
            s_bar_dot = -(u_bar_dot * ut * ut + 2.0 * u_bar * ut * ut_dot) / a
            v_bar_dot = v_bar_dot + s_bar_dot @ K + s_bar @ K_dot
            w_bar_dot = -(v_bar_dot * vt * vt + 2.0 * v_bar * vt * vt_dot) / b
            left_dot += [s_bar_dot, us_dot[t - 1]]
            right_dot += [vt_dot, w_bar_dot]
            u_bar_dot = K @ w_bar_dot + K_dot @ w_bar
            v_bar_dot = np.zeros(m)
        u_bar = K @ w_bar
        v_bar = np.zeros(m)
    L, R = np.column_stack(left), np.vstack(right)
    LR = L @ R
    W = T - (TM + K * LR) / reg
    if not tangent:
        return loss, W, None, None
    R_dot = np.column_stack(left_dot) @ R + L @ np.vstack(right_dot)
    W_dot = T_dot - (TM_dot + K_dot * LR + K * R_dot) / reg
    return loss, W, loss_dot, W_dot


def _pair_scatter(Xa: np.ndarray, Xb: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Σ_ij T_ij (a_i − b_j)(a_i − b_j)ᵀ without forming the differences."""
    r, c = T.sum(axis=1), T.sum(axis=0)
    cross = Xa.T @ T @ Xb
    return Xa.T @ (r[:, None] * Xa) + Xb.T @ (c[:, None] * Xb) - cross - cross.T


def pair_scatter_at(Xa: np.ndarray, Xb: np.ndarray, P: np.ndarray, reg: float,
                     n_iter: int) -> np.ndarray:
    """:func:`_pair_scatter` at the plan T(P) between XaP and XbP, from Sinkhorn's scalings
    without forming T: with T = diag(u) K diag(v), row sums r and column sums c,

        Σ_ij T_ij (a_i − b_j)(a_i − b_j)ᵀ = Xaᵀ diag(r) Xa + Xbᵀ diag(c) Xb − S − Sᵀ,
        S = (diag(u) Xa)ᵀ K (diag(v) Xb);

    the explicit plan (log domain if need be) where the scalings are not finite."""
    Ya, Yb = Xa @ P, Xb @ P
    K, scalings = _scaled_kernel(Ya, Yb, reg, n_iter)
    if scalings is not None:
        u, v, r, c = scalings
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            cross = (u[:, None] * Xa).T @ (K @ (v[:, None] * Xb))
            C = Xa.T @ (r[:, None] * Xa) + Xb.T @ (c[:, None] * Xb) - cross - cross.T
        if np.all(np.isfinite(C)):
            return C
    return _pair_scatter(Xa, Xb, plan(Ya, Yb, reg, n_iter, (K, scalings)))
