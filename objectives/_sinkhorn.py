"""Entropic optimal transport for WDA, by hand: Sinkhorn's plan between two point clouds, in
the scaling form and in the log domain (autograd-traceable: the reference for
:mod:`ldr.objectives._transport`, which WDA's oracles and pair scatters use), for
:meth:`ldr.objectives.WDA.plans` and WDA's cost on an autograd trace.

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
