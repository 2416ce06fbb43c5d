"""Wasserstein discriminant analysis (Flamary et al. 2018; Liu, Cai, Chen & Li, ratio trace).

Classes c with samples X^c (rows, centered per feature).  For every pair of classes c ≤ c′ an
entropic transport plan T^{c,c′}(P) between X^cP and X^{c′}P with uniform weights, cost
M_ij = ‖Pᵀ(x_i − x_j)‖² and kernel K = exp(−M/reg) — the regularization is named and scaled
as in POT (``reg``; the papers' λ is 1/reg) — computed by a fixed number of Sinkhorn
iterations from u = 1.  Then

    C^{c,c′} = Σ_ij T_ij (x_i − x_j)(x_i − x_j)ᵀ,   C_b = Σ_{c<c′} C^{c,c′},   C_w = Σ_c C^{c,c},

Sinkhorn runs in scaling form when that stays finite and in the log domain otherwise (small
``reg``), so it never overflows; the iterates are the same either way.

* ``cost``   the trace ratio −tr(PᵀC_bP)/tr(PᵀC_wP) with T = T(P) (Flamary et al.), whose
  gradient (autograd) differentiates through the Sinkhorn iterations, as they do;
* ``pencil`` (C_b(T(P)), C_w(T(P)) + εI): the ratio-trace NLEP C_b(P)V = C_w(P)VΛ of Liu et al.,
  solved by SCF (``ldr.solvers.SCF``).

Both depend on P only through PPᵀ: the manifold is Grassmann.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
from autograd.scipy.special import logsumexp

from ldr._validation import check_data, check_labels, check_new_data, check_rank
from ldr.eigen import top_generalized
from ldr.kernels import beta
from ldr.objective import Objective
from ldr.objectives.lda import scatter_matrices


def _value(x):
    return getattr(x, "_value", x)


def sinkhorn(M, reg: float, n_iter: int):
    """Entropic transport plan with uniform marginals after ``n_iter`` Sinkhorn iterations
    from u = 1 (autograd-traceable).

    The scaling form v = b/(Kᵀu), u = a/(Kv), T = diag(u) K diag(v) is used when it stays
    finite (matrix-vector products: fast); otherwise (small ``reg``: K underflows, u and v
    overflow) the identical iteration runs in the log domain.  Both give the same T.
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
        if np.all(np.isfinite(_value(T))):
            return T
    return sinkhorn_log(M, reg, n_iter)


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


def _sinkhorn_np(M: np.ndarray, reg: float, n_iter: int) -> np.ndarray:
    """:func:`sinkhorn` on plain arrays, without autograd's per-call wrapping."""
    n, m = M.shape
    K = np.exp(M * (-1.0 / reg))
    if K.sum(axis=0).min() > 1e-200 and K.sum(axis=1).min() > 1e-200:
        a, b = 1.0 / n, 1.0 / m
        u = np.ones(n)
        for _ in range(n_iter):
            v = b / (u @ K)
            u = a / (K @ v)
        K *= u[:, None]
        K *= v[None, :]
        if np.all(np.isfinite(K)):
            return K
    return np.asarray(sinkhorn_log(M, reg, n_iter))


def _sqdist(A, B):
    sa = anp.sum(A * A, axis=1)
    sb = anp.sum(B * B, axis=1)
    return anp.maximum(sa[:, None] + sb[None, :] - 2.0 * anp.dot(A, B.T), 0.0)


def _pair_scatter(Xa: np.ndarray, Xb: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Σ_ij T_ij (a_i − b_j)(a_i − b_j)ᵀ without forming the differences."""
    r, c = T.sum(axis=1), T.sum(axis=0)
    cross = Xa.T @ T @ Xb
    return Xa.T @ (r[:, None] * Xa) + Xb.T @ (c[:, None] * Xb) - cross - cross.T


class WDA(Objective):
    """Wasserstein discriminant analysis on Grassmann(d, p).

    Parameters
    ----------
    X : (n, d) data; y : (n,) labels, at least two classes of at least two samples each
    p : subspace dimension, 1 ≤ p < d
    reg : entropic regularization > 0, as in POT (K = exp(−M/reg); the WDA papers' λ = 1/reg)
    sinkhorn_iter : fixed number of Sinkhorn iterations (POT's ``wda`` uses 10)
    eps : the pencil's C_w + εI uses ε = eps · tr(C_w)/d (relative, so scale-free)

    Examples
    --------
    >>> import ldr
    >>> X, y = ldr.datasets.make_wda(300, seed=0)
    >>> wda = WDA(X, y, p=2, reg=1.0)
    >>> res = ldr.solve(wda, "scf", M0="heuristic")
    >>> res.converged
    True
    """

    def __init__(self, X, y, p: int, reg: float = 1.0, sinkhorn_iter: int = 10,
                 eps: float = 1e-8, manifold: str = "grassmann"):
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
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        self.classes_, self.codes_ = classes, codes
        self.groups = [Xc[codes == c] for c in range(len(classes))]
        self.reg, self.sinkhorn_iter, self.eps = float(reg), int(sinkhorn_iter), float(eps)
        self.shape, self.manifold = (X.shape[1], p), manifold
        self._X = Xc
        self._key = None

    def _pairs(self):
        k = len(self.groups)
        return [(a, b) for a in range(k) for b in range(a, k)]

    def plans(self, P) -> dict:
        """The transport plans T^{c,c′}(P) for c ≤ c′."""
        # squared distances between the projected groups: the difference-kernel β
        return {(a, b): _sinkhorn_np(beta("difference", self.groups[b] @ P, self.groups[a] @ P),
                                     self.reg, self.sinkhorn_iter)
                for a, b in self._pairs()}

    def scatter(self, P) -> tuple[np.ndarray, np.ndarray]:
        """(C_b, C_w) at T = T(P) (cached for the last P)."""
        P = np.asarray(P, dtype=float)
        key = P.tobytes()
        if key != self._key:
            d = self.shape[0]
            Cb, Cw = np.zeros((d, d)), np.zeros((d, d))
            for (a, b), T in self.plans(P).items():
                C = _pair_scatter(self.groups[a], self.groups[b], T)
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
            T = sinkhorn(M, self.reg, self.sinkhorn_iter)
            if a == b:
                loss_w = loss_w + anp.sum(T * M)
            else:
                loss_b = loss_b + anp.sum(T * M)
        return -loss_b / loss_w

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

    def heuristic(self) -> np.ndarray:
        """Regularized FDA: top-p generalized eigenvectors of (S_b, S_w + 1e-3·tr(S_w)/d·I)."""
        Sw, Sb, _ = scatter_matrices(self._X, self.codes_, len(self.classes_))
        d, p = self.shape
        return top_generalized(Sb, Sw + 1e-3 * np.trace(Sw) / d * np.eye(d), p)[0]

    def transform(self, X, P):
        return (check_new_data(X, self.shape[0]) - self.mean_) @ P
