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
top-p generalized eigenvectors of the pencil at the answer of ``coarse_problem()``:
continuation in reg — the driver first solves the smoother problem with reg × 10
(``continuation``) by SCF from its whole-space pencil (P = I_d: the
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
import warnings

import autograd.numpy as anp
import numpy as np

from ldr.data.validation import (
    check_data,
    check_labels,
    check_new_data,
    check_nonsingular,
    check_rank,
)
from ldr.eigen import top_generalized
from ldr.errors import ParameterError
from ldr.objective import Method, Objective
from ldr.objectives._sinkhorn import (
    pair_scatter_at,
    plan,
    sinkhorn,
    sqdist,
    transport_derivatives,
)
from ldr.objectives.lda import scatter_matrices

__all__ = ["WDA"]


class WDA(Objective):
    """Wasserstein discriminant analysis on Grassmann(d, r).

    Parameters
    ----------
    X : (n, d) data; y : (n,) labels, at least two classes of at least two samples each
    r : subspace dimension, 1 ≤ r < d (the papers' p; ``p=`` is a deprecated alias)
    reg : entropic regularization > 0, as in POT (K = exp(−M/reg); the WDA papers' λ = 1/reg)
    sinkhorn_iter : fixed number of Sinkhorn iterations (POT's ``wda`` uses 10)
    eps : the pencil's C_w + εI uses ε = eps · tr(C_w)/d (relative, so scale-free)
    continuation : float ≥ 1
        SCF's own start is the pencil at the ratio-trace fixed point of the smoother problem
        with reg × ``continuation`` (``coarse_problem``, solved by the driver from its
        whole-space pencil: continuation in reg); 1 uses the whole-space pencil directly.
    normalize_at : (d, p) array, optional
        POT's ``normalize=True`` with ``P0 = normalize_at``: each pair's reg is scaled by the
        mean squared distance between its classes projected by this matrix (module
        docstring; ``pair_reg`` holds the results).  None (default): ``reg`` for every pair.

    Examples
    --------
    >>> import ldr
    >>> X, y = ldr.datasets.make_wda(300, seed=0)
    >>> wda = WDA(X, y, r=2, reg=1.0)
    >>> res = ldr.solve(wda, "scf", M0="heuristic")
    >>> res.converged
    True

    Default solver: ``["scf", "trust-region"]`` from SCF's own start, continuation in reg
    (``coarse_problem``; module docstring).
    """

    method = Method("wda", "Wasserstein discriminant analysis (trace ratio; pencil for SCF)",
                    supervised=True, options={"reg": "reg"},  # plans per pair of classes
                    memory=lambda n, sizes: 8 * 16 * max(sizes) ** 2)

    def __init__(self, X, y, r: int | None = None, reg: float = 1.0, sinkhorn_iter: int = 10,
                 eps: float = 1e-8, continuation: float = 10.0, manifold: str = "grassmann",
                 normalize_at=None, *, p: int | None = None):
        if p is not None:  # the WDA paper's and POT's name for r
            warnings.warn("WDA(p=...) is deprecated since ldr 0.2 and will be removed in the "
                          "next release; pass r=... (every objective's dimension is r)",
                          FutureWarning, stacklevel=2)
            if r is not None:
                raise ParameterError("p", "pass r (p is its deprecated alias), not both")
            r = p
        if r is None:
            raise ParameterError("r", "the subspace dimension is required")
        X = check_data(X, "X")
        classes, codes = check_labels(y, X.shape[0], "y")
        counts = np.bincount(codes)
        if counts.min() < 2:
            small = [classes[i] for i in np.flatnonzero(counts < 2)]
            raise ParameterError(
                "y", f"every class needs at least two samples for a transport plan; "
                             f"class(es) {small} have one")
        r = check_rank(r, X.shape[1], "r")
        if not (np.isscalar(reg) and np.isfinite(reg) and reg > 0):
            raise ParameterError("reg", f"the entropic regularization must be > 0, got {reg!r}")
        if not (isinstance(sinkhorn_iter, (int, np.integer)) and sinkhorn_iter >= 1):
            raise ParameterError("sinkhorn_iter",
                                 f"must be a positive integer, got {sinkhorn_iter!r}")
        if not (np.isscalar(eps) and eps >= 0):
            raise ParameterError("eps", f"must be >= 0, got {eps!r}")
        if not (np.isscalar(continuation) and np.isfinite(continuation) and continuation >= 1):
            raise ParameterError("continuation", f"must be a number >= 1 (1: none), got "
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
        self.shape, self.manifold = (X.shape[1], r), manifold
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
            raise ParameterError("normalize_at", f"expected a finite array of shape {self.shape} "
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
                raise ParameterError("normalize_at", f"classes {name_a!r} and {name_b!r} have no "
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
        return {(a, b): plan(self.groups[a] @ P, self.groups[b] @ P, self._reg(a, b),
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
                C = pair_scatter_at(self.groups[a], self.groups[b], P, self._reg(a, b),
                                     self.sinkhorn_iter)
                if a == b:
                    Cw += C
                else:
                    Cb += C
            uniform = sum(2.0 * float(np.sum((G - G.mean(axis=0)) ** 2)) / len(G)
                          for G in self.groups)  # tr C_w of uniform plans (reg → ∞)
            if not np.trace(Cw) > 1e-12 * uniform:
                spread = uniform / (2 * len(self.groups))
                reg = self.__dict__.get("_asked_reg", self.reg)  # the user's, not a coarse one
                raise ParameterError("reg", f"{reg:g} is too small for these data: the "
                                     "within-class plans are (numerically) the identity, so the "
                                     "within-class scatter vanishes and the ratio is unbounded; "
                                     f"the within-class squared distances are about "
                                     f"{spread:.3g}: pass a reg of that order (reg is in "
                                     "squared-distance units; WassersteinDA: or normalize=True)")
            self._key, self._scatter = key, (0.5 * (Cb + Cb.T), 0.5 * (Cw + Cw.T))
        return self._scatter

    def cost(self, P):
        if isinstance(P, np.ndarray):  # a value, not an autograd trace: reuse the cached plans
            Cb, Cw = self.scatter(P)
            return -float(np.sum(P * (Cb @ P)) / np.sum(P * (Cw @ P)))
        loss_b, loss_w = 0.0, 0.0
        for a, b in self._pairs():
            M = sqdist(anp.dot(self.groups[a], P), anp.dot(self.groups[b], P))
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
            terms = transport_derivatives(Ya, Yb, Ya_dot, Yb_dot, self._reg(a, b),
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
        other._asked_reg = self.__dict__.get("_asked_reg", self.reg)
        return other

    def pencil0(self) -> tuple[np.ndarray, np.ndarray]:
        """The whole-space pencil: SCF's own start when there is no coarse problem."""
        return self.whole_space_pencil()

    def coarse_problem(self) -> WDA | None:
        """The smoother problem with reg × ``continuation`` (no continuation of its own), whose
        ratio-trace fixed point — reached by SCF from its whole-space pencil — gives, through
        the pencil there, SCF's start on this one (:func:`ldr.driver.initial_point`); None
        when ``continuation`` is 1."""
        return None if self.continuation == 1.0 else self.smoothed(self.continuation)

    def heuristic(self) -> np.ndarray:
        """Regularized FDA: top-p generalized eigenvectors of (S_b, S_w + 1e-3·tr(S_w)/d·I)."""
        Sw, Sb = self._fda_scatter
        d, p = self.shape
        return top_generalized(Sb, Sw + 1e-3 * np.trace(Sw) / d * np.eye(d), p)[0]

    def transform(self, X, P):
        return (check_new_data(X, self.shape[0]) - self.mean_) @ P
