"""Wasserstein discriminant analysis (Flamary et al. 2018; Liu, Cai, Chen & Li, ratio trace).

Classes c with samples X^c (rows, centered per feature).  For every pair of classes c ≤ c′ an
entropic transport plan T^{c,c′}(P) between X^cP and X^{c′}P with uniform weights, cost
M_ij = ‖Pᵀ(x_i − x_j)‖² and kernel K = exp(−M/reg) — the regularization is named and scaled
as in POT (``reg``; the papers' λ is 1/reg) — computed by a fixed number of Sinkhorn
iterations from u = 1.  Then

    C^{c,c′} = Σ_ij T_ij (x_i − x_j)(x_i − x_j)ᵀ,   C_b = Σ_{c<c′} C^{c,c′},   C_w = Σ_c C^{c,c},

Sinkhorn runs in scaling form when that stays finite and in the log domain otherwise (small
``reg``), so it never overflows; the iterates are the same either way.

``normalize_at=P0`` is POT's ``ot.dr.wda(..., P0=P0, normalize=True)``: the plan of each pair
of classes (c, c′), within-class pairs included, uses the regularization

    reg_{c,c′} = reg · (1 / (n_c n_{c′})) Σ_{i∈c, j∈c′} ‖P0ᵀ(x_i − x_j)‖²,

the mean squared distance between the two classes' samples projected by P0 (the matrix as
given, not orthonormalized, as in POT), fixed for the whole run — so ``reg`` becomes relative
to each pair's spread.

* ``cost``   the trace ratio −tr(PᵀC_bP)/tr(PᵀC_wP) with T = T(P) (Flamary et al.), whose
  gradient differentiates through the Sinkhorn iterations, as they do — by hand (reverse
  mode, and forward mode over it for Hessian-vector products; about 4× faster than autograd,
  and equal to it to rounding), with autograd through the log domain where the scalings are
  extreme;
* ``pencil`` (C_b(T(P)), C_w(T(P)) + εI): the ratio-trace NLEP C_b(P)V = C_w(P)VΛ of Liu et al.,
  solved by SCF (``ldr.solvers.SCF``).

Both depend on P only through PPᵀ: the manifold is Grassmann.

Defaults (``ldr.solve(WDA(...))``): the chain SCF → trust region from SCF's own start, the
top-p generalized eigenvectors of ``pencil0()``: continuation in reg — SCF first solves the
smoother problem with reg × 10 (``continuation``) from its whole-space pencil (P = I_d: the
plans in the original metric, before any projection), and the pencil at that fixed point
starts the problem itself.  The ratio trace has poor fixed points (a signal and a noise
direction); on 40 draws of POT's example data × reg 0.1, 1, 5 (120 problems), the
regularized-FDA start (``heuristic``) led SCF to one on 41, the whole-space pencil on 2 (at
reg 0.1), the continuation on none (``benchmarks/bench_wda_defaults.py`` reports 60 further
problems, never used to choose this).  The trust region then maximizes the trace ratio itself
from that basin.

A singular within-class scatter (fewer samples than features, constant or collinear
features) makes the trace ratio unbounded — directions with no within-class spread — and is
rejected with the same error as LDA's, as a quotient of traces would be.
"""

from __future__ import annotations

import copy

import autograd.numpy as anp
import numpy as np
from autograd.scipy.special import logsumexp

from ldr._validation import check_data, check_labels, check_new_data, check_nonsingular, check_rank
from ldr.eigen import top_generalized
from ldr.kernels import beta
from ldr.objective import Objective
from ldr.objectives.lda import scatter_matrices


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


def _plan(Ya: np.ndarray, Yb: np.ndarray, reg: float, n_iter: int,
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


def _sqdist(A, B):
    sa = anp.sum(A * A, axis=1)
    sb = anp.sum(B * B, axis=1)
    return anp.maximum(sa[:, None] + sb[None, :] - 2.0 * anp.dot(A, B.T), 0.0)


def _transport_derivatives(Ya, Yb, Ya_dot, Yb_dot, reg: float, n_iter: int):
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


def _pair_scatter_at(Xa: np.ndarray, Xb: np.ndarray, P: np.ndarray, reg: float,
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
    return _pair_scatter(Xa, Xb, _plan(Ya, Yb, reg, n_iter, (K, scalings)))


class WDA(Objective):
    """Wasserstein discriminant analysis on Grassmann(d, p).

    Parameters
    ----------
    X : (n, d) data; y : (n,) labels, at least two classes of at least two samples each
    p : subspace dimension, 1 ≤ p < d
    reg : entropic regularization > 0, as in POT (K = exp(−M/reg); the WDA papers' λ = 1/reg)
    sinkhorn_iter : fixed number of Sinkhorn iterations (POT's ``wda`` uses 10)
    eps : the pencil's C_w + εI uses ε = eps · tr(C_w)/d (relative, so scale-free)
    continuation : float ≥ 1
        SCF's own start (``pencil0``) is the pencil at the ratio-trace fixed point of the
        smoother problem with reg × ``continuation``, itself solved from the whole-space
        pencil (continuation in reg); 1 uses the whole-space pencil directly.
    normalize_at : (d, p) array, optional
        POT's ``normalize=True`` with ``P0 = normalize_at``: each pair's reg is scaled by the
        mean squared distance between its classes projected by this matrix (module
        docstring; ``pair_reg`` holds the results).  None (default): ``reg`` for every pair.

    Examples
    --------
    >>> import ldr
    >>> X, y = ldr.datasets.make_wda(300, seed=0)
    >>> wda = WDA(X, y, p=2, reg=1.0)
    >>> res = ldr.solve(wda, "scf", M0="heuristic")
    >>> res.converged
    True

    Default solver: ``["scf", "trust-region"]`` from SCF's own start, continuation in reg
    (``pencil0``; module docstring).
    """

    def __init__(self, X, y, p: int, reg: float = 1.0, sinkhorn_iter: int = 10,
                 eps: float = 1e-8, continuation: float = 10.0, manifold: str = "grassmann",
                 normalize_at=None):
        X = check_data(X, "X")
        classes, codes = check_labels(y, X.shape[0], "y")
        counts = np.bincount(codes)
        if counts.min() < 2:
            small = [classes[i] for i in np.flatnonzero(counts < 2)]
            raise ValueError(f"y: every class needs at least two samples for a transport plan; "
                             f"class(es) {small} have one")
        p = check_rank(p, X.shape[1], "p")
        if not (np.isscalar(reg) and np.isfinite(reg) and reg > 0):
            raise ValueError(f"reg: the entropic regularization must be > 0, got {reg!r}")
        if not (isinstance(sinkhorn_iter, (int, np.integer)) and sinkhorn_iter >= 1):
            raise ValueError(f"sinkhorn_iter: must be a positive integer, got {sinkhorn_iter!r}")
        if not (np.isscalar(eps) and eps >= 0):
            raise ValueError(f"eps: must be >= 0, got {eps!r}")
        if not (np.isscalar(continuation) and np.isfinite(continuation) and continuation >= 1):
            raise ValueError(f"continuation: must be a number >= 1 (1: none), got "
                             f"{continuation!r}")
        self.continuation = float(continuation)
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        Sw, Sb, _ = scatter_matrices(Xc, codes, len(classes))  # FDA's: the check, heuristic()
        check_nonsingular(Sw, "X",
                          "within-class scatter S_w", "the WDA trace ratio is unbounded along "
                          "directions with no within-class spread", X.shape[0],
                          remedy="Reduce the dimension first (e.g. PCA to fewer than n_samples "
                          "− n_classes components) and drop constant or duplicated features.")
        self._fda_scatter = (Sw, Sb)
        self.classes_, self.codes_ = classes, codes
        self.groups = [Xc[codes == c] for c in range(len(classes))]
        self.reg, self.sinkhorn_iter, self.eps = float(reg), int(sinkhorn_iter), float(eps)
        self.shape, self.manifold = (X.shape[1], p), manifold
        self._key = None
        self._pair_scale = {pair: 1.0 for pair in self._pairs()}
        if normalize_at is not None:
            self._pair_scale = self._mean_sq_distances(normalize_at)

    def _mean_sq_distances(self, P0) -> dict:
        """(1/(n_a n_b)) Σ_ij ‖P0ᵀ(x_i − x_j)‖² for each pair of classes (a ≤ b), as
        v_a + v_b + ‖m_a − m_b‖² from each class's projected mean m and spread v (mean squared
        distance to its mean): no n_a × n_b matrix, and no cancellation when the classes lie
        far from the origin compared with their spread."""
        P0 = np.asarray(P0, dtype=float)
        if P0.shape != self.shape or not np.all(np.isfinite(P0)):
            raise ValueError(f"normalize_at: expected a finite array of shape {self.shape} "
                             f"(POT's P0), got shape {P0.shape}")
        proj = [G @ P0 for G in self.groups]
        means = [Y.mean(axis=0) for Y in proj]
        spread = [float(np.mean(np.sum((Y - m) ** 2, axis=1))) for Y, m in zip(proj, means)]
        out = {}
        for a, b in self._pairs():
            gap = means[a] - means[b]
            out[(a, b)] = spread[a] + spread[b] + float(gap @ gap)
            if not out[(a, b)] > 0:
                name_a, name_b = self.classes_[a].item(), self.classes_[b].item()
                raise ValueError(f"normalize_at: classes {name_a!r} and {name_b!r} have no "
                                 "spread along it (mean squared "
                                 "distance 0), so it cannot scale their regularization; pass "
                                 "another start matrix or normalize=False")
        return out

    @property
    def pair_reg(self) -> dict:
        """The entropic regularization of each pair of classes (a, b), a ≤ b, by class code:
        ``reg`` times the ``normalize_at`` scale (1 without it)."""
        return {pair: self.reg * scale for pair, scale in self._pair_scale.items()}

    def _reg(self, a: int, b: int) -> float:
        return self.reg * self._pair_scale[(a, b)]

    def _pairs(self):
        k = len(self.groups)
        return [(a, b) for a in range(k) for b in range(a, k)]

    def plans(self, P) -> dict:
        """The transport plans T^{c,c′}(P) for c ≤ c′ (:meth:`scatter` uses them unformed)."""
        P = np.asarray(P, dtype=float)
        return {(a, b): _plan(self.groups[a] @ P, self.groups[b] @ P, self._reg(a, b),
                              self.sinkhorn_iter)
                for a, b in self._pairs()}

    def scatter(self, P) -> tuple[np.ndarray, np.ndarray]:
        """(C_b, C_w) at T = T(P) (cached for the last P)."""
        P = np.asarray(P, dtype=float)
        key = P.tobytes()
        if key != self._key:
            d = self.shape[0]
            Cb, Cw = np.zeros((d, d)), np.zeros((d, d))
            for a, b in self._pairs():
                C = _pair_scatter_at(self.groups[a], self.groups[b], P, self._reg(a, b),
                                     self.sinkhorn_iter)
                if a == b:
                    Cw += C
                else:
                    Cb += C
            self._key, self._scatter = key, (0.5 * (Cb + Cb.T), 0.5 * (Cw + Cw.T))
        return self._scatter

    def cost(self, P):
        if isinstance(P, np.ndarray):  # a value, not an autograd trace: reuse the cached plans
            Cb, Cw = self.scatter(P)
            return -float(np.sum(P * (Cb @ P)) / np.sum(P * (Cw @ P)))
        loss_b, loss_w = 0.0, 0.0
        for a, b in self._pairs():
            M = _sqdist(anp.dot(self.groups[a], P), anp.dot(self.groups[b], P))
            T = sinkhorn(M, self._reg(a, b), self.sinkhorn_iter)
            if a == b:
                loss_w = loss_w + anp.sum(T * M)
            else:
                loss_b = loss_b + anp.sum(T * M)
        return -loss_b / loss_w

    def _loss_derivatives(self, P, V=None):
        """(L_b, L_w), their Euclidean gradients and, given V, their derivatives along V:
        L = Σ_pairs ⟨T, M⟩ with ∇_P⟨T, M⟩ = 2 C(W) P, C(W) = Σ_ij W_ij (x_i − x_j)(x_i − x_j)ᵀ,
        W from :func:`_transport_derivatives`.  ``None`` when a plan needs the log domain."""
        out = {"b": [0.0, 0.0, 0.0, 0.0], "w": [0.0, 0.0, 0.0, 0.0]}
        for a, b in self._pairs():
            Xa, Xb = self.groups[a], self.groups[b]
            Ya, Yb = Xa @ P, Xb @ P
            Ya_dot, Yb_dot = (Xa @ V, Xb @ V) if V is not None else (None, None)
            terms = _transport_derivatives(Ya, Yb, Ya_dot, Yb_dot, self._reg(a, b),
                                           self.sinkhorn_iter)
            if terms is None:
                return None
            loss, W, loss_dot, W_dot = terms
            r, c = W.sum(axis=1), W.sum(axis=0)
            grad = 2.0 * (Xa.T @ (r[:, None] * Ya - W @ Yb) + Xb.T @ (c[:, None] * Yb - W.T @ Ya))
            acc = out["w" if a == b else "b"]
            acc[0] += loss
            acc[1] = acc[1] + grad
            if V is not None:
                r_dot, c_dot = W_dot.sum(axis=1), W_dot.sum(axis=0)
                acc[2] += loss_dot
                acc[3] = acc[3] + 2.0 * (
                    Xa.T @ (r_dot[:, None] * Ya + r[:, None] * Ya_dot - W_dot @ Yb - W @ Yb_dot)
                    + Xb.T @ (c_dot[:, None] * Yb + c[:, None] * Yb_dot - W_dot.T @ Ya
                              - W.T @ Ya_dot))
        return out["b"], out["w"]

    def egrad(self, P):
        """∇(−L_b/L_w) = −(L_w ∇L_b − L_b ∇L_w)/L_w², through the Sinkhorn iterations (by
        hand; autograd when a plan needs the log domain)."""
        terms = self._loss_derivatives(np.asarray(P, dtype=float)) \
            if isinstance(P, np.ndarray) else None
        if terms is None:
            return super().egrad(P)
        (Lb, gb, _, _), (Lw, gw, _, _) = terms
        return -(Lw * gb - Lb * gw) / Lw**2

    def ehvp(self, P, V):
        """The derivative of :meth:`egrad` along V (forward mode through the reverse pass, by
        hand; autograd when a plan needs the log domain)."""
        terms = self._loss_derivatives(np.asarray(P, dtype=float), np.asarray(V, dtype=float)) \
            if isinstance(P, np.ndarray) else None
        if terms is None:
            return super().ehvp(P, V)
        (Lb, gb, Lb_dot, gb_dot), (Lw, gw, Lw_dot, gw_dot) = terms
        return (-(Lw * gb_dot + Lw_dot * gb - Lb_dot * gw - Lb * gw_dot) / Lw**2
                + 2.0 * (Lw * gb - Lb * gw) * Lw_dot / Lw**3)

    def ratio(self, P) -> float:
        """The trace ratio tr(PᵀC_bP)/tr(PᵀC_wP), the natural (positive) score."""
        return -float(self.cost(np.asarray(P, dtype=float)))

    def ratio_trace(self, P) -> float:
        """tr((PᵀC̃_wP)⁻¹ PᵀC_bP) at T = T(P), C̃_w = C_w + εI: the ratio-trace value that SCF's
        fixed points solve (Liu et al.); compare SCF answers by this, not by ``ratio``."""
        A, B = self.pencil(P)
        return float(np.trace(np.linalg.solve(P.T @ B @ P, P.T @ A @ P)))

    def pencil(self, P) -> tuple[np.ndarray, np.ndarray]:
        Cb, Cw = self.scatter(P)
        d = Cw.shape[0]
        return Cb, Cw + self.eps * np.trace(Cw) / d * np.eye(d)

    default_solver = ("scf", "trust-region")

    def whole_space_pencil(self) -> tuple[np.ndarray, np.ndarray]:
        """The pencil at P = I_d: the transport plans of the whole space, in the original
        metric, before any projection."""
        return self.pencil(np.eye(self.shape[0]))

    def smoothed(self, factor: float) -> WDA:
        """The same data and p with reg × ``factor`` (no continuation of its own)."""
        other = copy.copy(self)
        other.reg, other.continuation, other._key = self.reg * factor, 1.0, None
        return other

    def pencil0(self) -> tuple[np.ndarray, np.ndarray]:
        """SCF's own start (module docstring): the pencil at the ratio-trace fixed point of
        the problem with reg × ``continuation``, reached by SCF from that problem's
        whole-space pencil — or this problem's whole-space pencil when continuation is 1."""
        if self.continuation == 1.0:
            return self.whole_space_pencil()
        from ldr.driver import solve

        coarse = solve(self.smoothed(self.continuation), "scf", xtol=1e-6)
        return self.pencil(coarse.M)

    def heuristic(self) -> np.ndarray:
        """Regularized FDA: top-p generalized eigenvectors of (S_b, S_w + 1e-3·tr(S_w)/d·I)."""
        Sw, Sb = self._fda_scatter
        d, p = self.shape
        return top_generalized(Sb, Sw + 1e-3 * np.trace(Sw) / d * np.eye(d), p)[0]

    def transform(self, X, P):
        return (check_new_data(X, self.shape[0]) - self.mean_) @ P
