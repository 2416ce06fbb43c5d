"""Reduced-rank (ridge) linear regression as a Grassmann program (survey §3.2.4, Eq. 24–25;
Table 1, LR row).

Rows are samples: inputs X (n × p), outputs Y (n × q), both centered (the intercept is not
penalized).  The survey's LR row, ‖X_out − M X_in‖²_F + λ‖M‖_p with M of rank r, reads here
with B = Mᵀ (p × q, rank ≤ r) and the **squared Frobenius (ridge, ℓ2) penalty**:

    F(B) = ‖Y − X B‖²_F + α ‖B‖²_F,      rank B ≤ r.                              (Eq. 25)

**The manifold.**  Every B of rank ≤ r is B = G Vᵀ with V (q × r) an orthonormal basis of its
row space (the output directions it predicts) and ‖B‖_F = ‖G‖_F.  For fixed V the best G is a
ridge regression onto the r columns of YV, ``G(V) = (XᵀX + αI)⁻¹XᵀY V``, and profiling it out
(variable projection) leaves

    f(V) = c₀ + tr H − tr(VᵀHV),    H = YᵀX (XᵀX + αI)⁻¹ XᵀY  (q × q),

with c₀ = F(B_ridge) the full-rank ridge cost.  f depends only on span(V) (V → VR leaves it
unchanged), so V lives on the Grassmann manifold Gr(q, r): (q − r)·r unknowns instead of the
(p + q)·r of a factorization B = G Hᵀ on R^{p×r} × R^{q×r}, whose GL(r) invariance
(G → GT, H → HT⁻ᵀ) leaves a singular Hessian at every minimizer, and no scale to fix.  It
also shows that the global minimizer is spectral: V = the top-r eigenvectors of H, for every
α ≥ 0 (for α = 0 this is the classical answer of Izenman 1975 — OLS fit projected onto the
top-r right singular vectors of the fitted values, :func:`reduced_rank_closed_form` — and for
α > 0 the reduced-rank ridge regression of Mukherjee & Zhu 2011).

* cost      f(V) = c₀ + tr H − tr(VᵀHV)
* gradient  −2HV, Hessian-vector product −2HW;  Φ-oracle Φ = −H (constant: one ISM step is
  exact), pencil (H, I)
* heuristic "fit, then project": the full-rank ridge fit's fitted values X B_ridge, projected
  onto their top-r right singular vectors (Izenman's recipe applied to the ridge fit) — exact
  for α = 0, not for α > 0 (the optimum projects B_ridge onto the eigenvectors of H, not of
  (XB_ridge)ᵀ(XB_ridge))
* global test ``global_gap``: (Σ top-r eigenvalues of H − tr(VᵀHV)) / f*.

H and c₀ come from one thin SVD of X (``X = U diag(s) Wᵀ``: (XᵀX + αI)⁻¹Xᵀ = W diag(s/(s² + α))
Uᵀ, so H = (UᵀY)ᵀ diag(s²/(s² + α)) (UᵀY)), which also handles p > n and collinear inputs
for α = 0 (directions with s = 0 are dropped: the minimum-norm least-squares fit).

The low-dimensional map is the survey's ``S Vᵀ X_in`` for ``M = U S Vᵀ``: with the thin SVD
``B = U_B diag(S_B) W_Bᵀ`` (rank r), ``transform(X) = (X − mean) U_B diag(S_B)`` and the
prediction is ``transform(X) W_Bᵀ + ȳ`` (= (X − x̄) B + ȳ).

Default solver: ISM then trust region (one ISM step is exact; the trust region certifies).
"""

from __future__ import annotations

import numbers

import autograd.numpy as anp
import numpy as np
import scipy.linalg

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective
from ldr.data.validation import check_data, check_new_data

__all__ = ["ReducedRankRegression"]


def check_targets(y, n_samples: int, name: str = "y") -> np.ndarray:
    """Targets as a new (n_samples, q) float64 array (a 1-D y becomes one column)."""
    if y is None:
        raise ParameterError(name, "regression targets are required, got None")
    arr = np.asarray(y)
    if arr.ndim == 1:
        arr = arr[:, None]
    Y = check_data(arr, name, min_samples=1)
    if Y.shape[0] != n_samples:
        raise ParameterError(name, f"has {Y.shape[0]} rows but X has {n_samples} samples; they "
                         "must match")
    return Y


def check_alpha(alpha) -> float:
    """α as a float ≥ 0."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not (
            np.isfinite(alpha) and alpha >= 0):
        raise ParameterError(
            "alpha", f"the ridge penalty must be a finite number >= 0, got {alpha!r}")
    return float(alpha)


def penalized_cost(X, Y, B, alpha: float = 0.0, intercept=None) -> float:
    """F(B) = ‖Y − X B − intercept‖²_F + α‖B‖²_F, computed directly (no trace identities);
    the intercept defaults to the centering one (ȳ − x̄B)."""
    X, Y, B = np.asarray(X, float), np.asarray(Y, float), np.asarray(B, float)
    Y = Y[:, None] if Y.ndim == 1 else Y
    if intercept is None:
        intercept = Y.mean(axis=0) - X.mean(axis=0) @ B
    return float(np.sum((Y - X @ B - intercept) ** 2) + alpha * np.sum(B * B))


def ridge_factors(Xc, Yc, alpha: float, eps: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(B_ridge, H)`` for centered X and Y from one thin SVD X = U diag(s) Wᵀ:
    B_ridge = W diag(s/(s² + α)) UᵀY (α = 0: the minimum-norm least-squares fit, directions
    with s ≈ 0 dropped) and H = (UᵀY)ᵀ diag(s²/(s² + α)) (UᵀY) = YᵀX(XᵀX + αI)⁻¹XᵀY."""
    U, s, Wt = scipy.linalg.svd(Xc, full_matrices=False)
    return ridge_from_svd(s, Wt, U.T @ Yc, alpha, max(Xc.shape), eps)[:2]


def ridge_from_svd(s, Wt, UtY, alpha: float, n_max: int, eps: float | None = None):
    """:func:`ridge_factors` from the thin SVD statistics of centered X — its singular values
    ``s``, right factor ``Wt`` and ``UᵀY`` (NumPy; what an n-row SVD on another device
    brings to the host).  At α = 0 singular values below ``n_max · eps · s₁`` are dropped
    (``n_max`` = max(n, p); ``eps`` the data's relative precision, float64's by default —
    float32 data are collinear only to float32's, 1.2e-7: below it a fit is rounding noise).
    Also returns ``F = diag(s²/(s² + α)) UᵀY``: the fitted values are X B_ridge = U F, so
    their right singular vectors are F's (the heuristic, without an n-row SVD)."""
    if alpha == 0:
        eps = np.finfo(float).eps if eps is None else eps
        keep = s > n_max * eps * (s[0] if s.size else 0.0)
        s, Wt, UtY = s[keep], Wt[keep], UtY[keep]
    F = (s**2 / (s**2 + alpha))[:, None] * UtY
    H = UtY.T @ F
    return Wt.T @ ((s / (s**2 + alpha))[:, None] * UtY), 0.5 * (H + H.T), F


def reduced_rank_closed_form(X, Y, r: int) -> np.ndarray:
    """The classical reduced-rank regression B (p × q) for α = 0 (Izenman 1975), independently
    of :class:`ReducedRankRegression`: the least-squares fit B_ols of centered Y on centered X
    (``numpy.linalg.lstsq``, minimum norm), projected onto the top-r right singular vectors
    V_r of its fitted values: ``B = B_ols V_r V_rᵀ``."""
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    Y = Y[:, None] if Y.ndim == 1 else Y
    Xc = X - X.mean(axis=0)
    Yc = Y - Y.mean(axis=0)
    B_ols = np.linalg.lstsq(Xc, Yc, rcond=None)[0]
    Vt = np.linalg.svd(Xc @ B_ols, full_matrices=False)[2]
    return B_ols @ Vt[:r].T @ Vt[:r]


def _check_rank(r, q: int) -> None:
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 1 <= r < q:
        raise ParameterError("r", f"the rank must be an integer with 1 <= r < n_outputs = {q}, "
                             f"got {r!r}")


class ReducedRankRegression(Objective):
    """Reduced-rank ridge regression: minimize ‖Y − XB‖² + α‖B‖²_F over rank-r B = G(V)Vᵀ,
    V on the Grassmann manifold of the output space (module docstring).

    Parameters
    ----------
    X : array of shape (n_samples, n_inputs)
        Inputs as rows (centered on a copy).
    y : array of shape (n_samples, n_outputs) or (n_samples,)
        Outputs (targets), centered on a copy.
    r : int
        The rank, 1 ≤ r < n_outputs (with r ≥ n_outputs the constraint is void: that is
        ridge regression, :class:`~ldr.estimators.ReducedRankRegression` solves it in closed
        form).
    alpha : float ≥ 0, default 0
        α, the ridge penalty on ‖B‖²_F (in the units of Y²/X², as scikit-learn's Ridge).
    rcond : float, optional
        At α = 0, directions of X with singular values below rcond·s₁ are dropped, as
        :func:`numpy.linalg.lstsq`'s ``rcond`` (default max(n, p)·ε with ε float64's
        relative precision, :func:`numpy.linalg.matrix_rank`'s tolerance; float32 data:
        max(n, p)·1.2e-7).
    eps : deprecated
        The former relative precision ε: ``rcond = max(n, p)·eps``.

    Attributes
    ----------
    mean_ : (n_inputs,)
        The input mean.
    y_mean_ : (n_outputs,)
        The output mean.
    H : (n_outputs, n_outputs) the matrix whose top-r eigenvectors are the optimum
    coef_full_ : (n_inputs, n_outputs) the full-rank ridge (α = 0: least-squares) fit

    Examples
    --------
    >>> import numpy as np, ldr
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 6))
    >>> Y = X @ rng.standard_normal((6, 2)) @ rng.standard_normal((2, 5))
    >>> Y += 0.1 * rng.standard_normal((100, 5))
    >>> obj = ldr.objectives.ReducedRankRegression(X, Y, 2)
    >>> res = ldr.solve(obj)
    >>> B = obj.coef(res.M)
    >>> closed = ldr.objectives.rrr.reduced_rank_closed_form(X, Y, 2)
    >>> f = ldr.objectives.rrr.penalized_cost
    >>> bool(abs(f(X, Y, B) - f(X, Y, closed)) <= 1e-10 * f(X, Y, closed))
    True

    Default solver: ``["ism", "trust-region"]`` (one ISM step is exact).
    """

    method = Method("rrr", "reduced-rank regression onto the one-hot class indicators "
                    "(optimal scoring), ridge α = --reg, on the Grassmannian of the outputs",
                    supervised=True, options={"reg": "alpha"}, labels="onehot")

    def __init__(self, X, y, r: int, alpha: float = 0.0, rcond: float | None = None, *,
                 eps="deprecated"):
        X = check_data(X, "X", min_samples=2)
        precision = renamed_value(type(self).__name__, "eps", "rcond", eps, None)
        if rcond is not None:
            precision = float(rcond) / max(X.shape)
        Y = check_targets(y, X.shape[0])
        n, q = Y.shape
        if q < 2:
            raise ParameterError("y", "reduced-rank regression needs at least 2 outputs (with one, "
                             "the rank constraint is void: use ridge regression)")
        _check_rank(r, q)
        self.alpha = check_alpha(alpha)
        self.mean_ = X.mean(axis=0)
        self.y_mean_ = Y.mean(axis=0)
        Xc = X - self.mean_
        Yc = Y - self.y_mean_
        U, s, Wt = scipy.linalg.svd(Xc, full_matrices=False)
        self.coef_full_, self.H, self._fitted = ridge_from_svd(s, Wt, U.T @ Yc, self.alpha,
                                                               max(Xc.shape), precision)
        self.cost_full_ = penalized_cost(Xc, Yc, self.coef_full_, self.alpha, 0.0)
        self._trace_H = float(np.trace(self.H))
        self._Xc = Xc
        self._Yc = Yc
        self.shape = (q, int(r))
        self.manifold = "grassmann"

    @classmethod
    def from_statistics(cls, coef_full, H, fitted, cost_full: float, x_mean, y_mean, r: int,
                        alpha: float = 0.0) -> ReducedRankRegression:
        """The program from the full ridge fit ``coef_full`` (p × q), ``H`` (q × q), the
        factor ``fitted`` of its fitted values and its cost c₀ (``ridge_from_svd``),
        without the rows — the estimator's fit on another array namespace computes these
        there; :meth:`penalized_cost`, which reads the rows, is unavailable on it."""
        obj = cls.__new__(cls)
        q = H.shape[0]
        _check_rank(r, q)
        obj.alpha = check_alpha(alpha)
        obj.mean_ = np.asarray(x_mean, float)
        obj.y_mean_ = np.asarray(y_mean, float)
        obj.coef_full_ = coef_full
        obj.H = H
        obj.cost_full_ = float(cost_full)
        obj._trace_H = float(np.trace(H))
        obj._Xc = obj._Yc = None
        obj._fitted = np.asarray(fitted, float)
        obj.shape = (q, int(r))
        obj.manifold = "grassmann"
        return obj

    def _rows(self, what: str):
        if self._Xc is None:
            raise ParameterError("X", f"{what} reads the training rows, which this objective "
                                 "was built without (from_statistics): build it from X and y")
        return self._Xc, self._Yc

    # --- the Grassmann program ----------------------------------------------------------
    def cost(self, M):
        return self.cost_full_ + self._trace_H - anp.sum(M * anp.dot(self.H, M))

    def egrad(self, M):
        return -2.0 * (self.H @ M)

    def ehvp(self, M, V):
        return -2.0 * (self.H @ V)

    def phi(self, M=None) -> np.ndarray:
        return -self.H

    def phi0(self) -> np.ndarray:
        return -self.H

    def pencil(self, M=None) -> tuple[np.ndarray, np.ndarray]:
        return self.H, np.eye(self.H.shape[0])

    def optimum(self) -> np.ndarray:
        """The global minimizer: the top-r eigenvectors of H."""
        q, r = self.shape
        return scipy.linalg.eigh(self.H, subset_by_index=[q - r, q - 1])[1][:, ::-1].copy()

    def heuristic(self) -> np.ndarray:
        """"Fit, then project": the top-r right singular vectors of the full ridge fit's
        fitted values (exact for α = 0; module docstring)."""
        r = self.shape[1]
        Vt = np.linalg.svd(self._fitted, full_matrices=False)[2]  # X B_ridge = U F: F's
        return Vt[:r].T.copy()

    def global_gap(self, M) -> float:
        """``(f(M) − f*)/|f*|`` with f* from the eigenvalues of H; 0 exactly at the optimum."""
        q, r = self.shape
        top = float(np.sum(scipy.linalg.eigvalsh(self.H, subset_by_index=[q - r, q - 1])))
        M = np.asarray(M, float)
        f_star = self.cost_full_ + self._trace_H - top
        gap = top - float(np.sum(M * (self.H @ M)))
        return max(gap, 0.0) / max(abs(f_star), np.finfo(float).tiny)

    # --- the regression it defines ------------------------------------------------------
    def coef(self, M) -> np.ndarray:
        """B(V) = G(V) Vᵀ = B_ridge V Vᵀ (p × q)."""
        M = np.asarray(M, float)
        return self.coef_full_ @ M @ M.T

    def penalized_cost(self, M) -> float:
        """F(B(V)) evaluated directly on the centered training data (equals ``cost``)."""
        return penalized_cost(*self._rows("penalized_cost"), self.coef(M), self.alpha, 0.0)

    def svd_factors(self, M) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(U_B, S_B, W_B)`` with B(V) = U_B diag(S_B) W_Bᵀ, r columns each, S_B decreasing;
        each column of U_B has its largest-magnitude entry positive (the sign is otherwise
        arbitrary)."""
        M = np.asarray(M, float)
        Ug, Sg, Qt = np.linalg.svd(self.coef_full_ @ M, full_matrices=False)
        signs = np.sign(Ug[np.argmax(np.abs(Ug), axis=0), np.arange(Ug.shape[1])])
        signs[signs == 0] = 1.0
        return Ug * signs, Sg, (M @ Qt.T) * signs

    def linear_map(self, M):
        """The survey's map S_B U_Bᵀ x: x ↦ (x − ``mean_``) U_B diag(S_B)."""
        U, S, _ = self.svd_factors(M)
        return self.mean_, U * S

    def predict(self, X, M) -> np.ndarray:
        """``(X − mean_) B(V) + y_mean_``."""
        return (check_new_data(X, self.mean_.shape[0]) - self.mean_) @ self.coef(M) \
            + self.y_mean_
