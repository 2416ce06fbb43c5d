"""Reduced-rank (ridge) regression as a scikit-learn regressor and transformer (survey §3.2.4).

:class:`ReducedRankRegression` follows :class:`sklearn.cross_decomposition.PLSRegression`'s
API: ``fit(X, y)``, ``predict(X)``, ``score`` (R², from RegressorMixin) and
``transform(X)`` (the low-dimensional scores of X).  The rank-r coefficient minimizes
‖Y − XB‖² + α‖B‖²_F, found on the Grassmann manifold of the output space
(:mod:`ldr.objectives.rrr`).

Under scikit-learn's ``array_api_dispatch`` an input of another array namespace (a PyTorch
tensor, ...) is fitted on its device as :mod:`ldr.estimators._namespace` describes: the n-row
work — centring, the thin SVD of X, UᵀY and the fit's residual — runs there; the p×q and q×q
statistics of ``ldr.objectives.rrr.ridge_from_svd`` come to the host, where the Grassmann
program is solved; the fitted arrays, ``transform`` and ``predict`` are in the input's
namespace.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ldr.data.arrays import to_host
from ldr.estimators._base import (
    FLOAT_DTYPES,
    OutputMixin,
    as_output,
    cast_fitted,
    check_int_components,
    output_dtype,
    project_centered,
    solve_and_warn,
    start_point,
)
from ldr.estimators._namespace import moved, namespace_of, project_in, to_namespace
from ldr.estimators._output import validate_data
from ldr.objectives.rrr import ReducedRankRegression as RRRObjective
from ldr.objectives.rrr import check_alpha, penalized_cost, ridge_factors, ridge_from_svd


class ReducedRankRegression(OutputMixin, TransformerMixin, RegressorMixin, MultiOutputMixin,
                            BaseEstimator):
    """Linear regression with a coefficient of rank ≤ r and a ridge penalty (survey Eq. 25).

    Minimizes ‖Y − XB − 1bᵀ‖²_F + α‖B‖²_F over B (n_features × n_targets) of rank ≤ r and an
    unpenalized intercept b.  For r < n_targets this is the Grassmann program of
    :class:`ldr.objectives.ReducedRankRegression`, solved by :func:`ldr.solve`; for
    r = min(n_features, n_targets) the rank constraint is void and the answer is ridge
    regression (α = 0: least squares), computed in closed form (``result_`` is None then).

    Parameters
    ----------
    n_components : int or None, default None
        r, 1 <= r <= min(n_features, n_targets).  None: min(n_features, n_targets) (no rank
        reduction).
    alpha : float >= 0, default 0
        The ridge penalty α on ‖B‖²_F (squared Frobenius norm), as in scikit-learn's Ridge.
    solver : str, Solver, list or None, default None
        None: the objective's default (ISM, exact in one step, then the trust region, which
        certifies it).
    start : "heuristic", "random", None or array, default None
        None: the solver's own start (ISM: the exact eigenvectors); "heuristic": fit the full
        ridge model, then project its fitted values onto their top-r singular vectors.
    tol, max_iter, solver_params : see :class:`~ldr.estimators.LinearDR`
        The gradient tolerance, the iteration budget and the other options of
        :func:`ldr.solve`.
    random_state : int, RandomState or None, default 0
        Seeds a random start.

    float32 X gives float32 fitted arrays, scores and predictions; the fit itself runs in
    float64 (:mod:`ldr.estimators._output`), with α = 0's rank threshold at float32's
    precision (inputs collinear to float32's rounding are collinear: a least-squares fit to
    that rounding would give coefficients of 1e6).

    Attributes
    ----------
    coef_ : (n_targets, n_features), or (n_features,) when y is 1-D
        B transposed, as in scikit-learn's linear models: ``predict(X) = X @ coef_.T +
        intercept_``.
    intercept_ : (n_targets,) or float
    components_ : (n_components, n_features)
        The survey's map S_B U_Bᵀ (B = U_B diag(S_B) W_Bᵀ): ``transform(X) == (X − mean_) @
        components_.T``.
    y_loadings_ : (n_targets, n_components)
        W_B: ``predict(X) == transform(X) @ y_loadings_.T + y_mean_``.
    mean_ : (n_features,)
        The mean of X.
    y_mean_ : (n_targets,)
        The mean of y.
    cost_ : float
        The penalized cost ‖Y − XB − 1bᵀ‖² + α‖B‖²_F on the training data.
    M_ : (n_targets, n_components) orthonormal basis of the predicted output directions
        (None when the rank constraint is void)
    n_components_, n_iter_, result_, objective_, n_features_in_ : as in
        :class:`ldr.estimators.LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 8))
    >>> Y = X @ rng.standard_normal((8, 2)) @ rng.standard_normal((2, 5))
    >>> Y += rng.standard_normal((200, 5))
    >>> rrr = ReducedRankRegression(n_components=2).fit(X, Y)
    >>> rrr.transform(X).shape, rrr.predict(X).shape, rrr.coef_.shape
    ((200, 2), (200, 5), (5, 8))
    >>> bool(rrr.score(X, Y) > 0.9)
    True
    """

    def __init__(self, n_components=None, *, alpha=0.0, solver=None, start=None,
                 tol=1e-8, max_iter=1000, solver_params=None,
                 random_state=0):
        self.n_components, self.alpha = n_components, alpha
        self.solver, self.start = solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.array_api_support = True  # (module docstring)
        return tags

    def fit(self, X, y) -> ReducedRankRegression:
        """Fit the rank-r coefficient of y (n × n_targets, or (n,)) on X; returns self."""
        space = namespace_of(X)
        if space is not None:
            return self._fit_in(X, y, *space)
        X, y = validate_data(self, X, y, dtype=FLOAT_DTYPES, ensure_min_samples=2,
                             multi_output=True, y_numeric=True)
        dtype = output_dtype(X)  # float32 in, float32 out; computed in float64
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
        Y = y[:, None] if y.ndim == 1 else y
        p, q = X.shape[1], Y.shape[1]
        r = check_int_components(min(p, q) if self.n_components is None else self.n_components,
                                 min(p, q), "min(n_features, n_targets)")
        alpha = check_alpha(self.alpha)
        if r < q and r < p:
            obj = RRRObjective(X, Y, r, alpha=alpha, eps=np.finfo(dtype).eps)
            res = solve_and_warn(self, obj, start_point(self.start, obj))
            self.M_ = np.asarray(res.M, dtype=float)
            U, S, W = obj.svd_factors(self.M_)
            B = obj.coef(self.M_)
            self.objective_, self.result_, self.n_iter_ = obj, res, res.n_iter
        else:  # the rank constraint is void: ridge regression in closed form
            B, U, S, W = _ridge(X, Y, alpha, r, np.finfo(dtype).eps)
            self.M_, self.objective_, self.result_, self.n_iter_ = None, None, None, 0
        self._finish(X.mean(axis=0), Y.mean(axis=0), B, U, S, W, y.ndim, r)
        self.cost_ = penalized_cost(X, Y, B, alpha, self.y_mean_ - self.mean_ @ B)
        cast_fitted(self, dtype)
        return self

    def _finish(self, x_mean, y_mean, B, U, S, W, y_ndim: int, r: int) -> None:
        self.mean_, self.y_mean_ = x_mean, y_mean
        self.components_ = (U * S).T
        self.y_loadings_ = W
        intercept = self.y_mean_ - self.mean_ @ B
        self.coef_ = B.T[0] if y_ndim == 1 else B.T
        self.intercept_ = float(intercept[0]) if y_ndim == 1 else intercept
        self.n_components_ = r

    def _fit_in(self, X, y, xp, device) -> ReducedRankRegression:
        """:meth:`fit` for X of namespace ``xp`` on ``device`` (y moved there; module
        docstring)."""
        X, y = validate_data(self, X, moved(y, xp, device), dtype=[xp.float64, xp.float32],
                             ensure_min_samples=2, multi_output=True, y_numeric=True)
        dtype = np.float32 if X.dtype == xp.float32 else np.float64
        X, Y = xp.astype(X, xp.float64), xp.astype(y, xp.float64)
        Y = Y[:, None] if Y.ndim == 1 else Y
        (n, p), q = X.shape, Y.shape[1]
        r = check_int_components(min(p, q) if self.n_components is None else self.n_components,
                                 min(p, q), "min(n_features, n_targets)")
        alpha = check_alpha(self.alpha)
        x_mean, y_mean = xp.mean(X, axis=0), xp.mean(Y, axis=0)
        Xc, Yc = X - x_mean, Y - y_mean
        U, s, Wt = xp.linalg.svd(Xc, full_matrices=False)
        B, H, F = ridge_from_svd(to_host(s), to_host(Wt), to_host(U.T @ Yc), alpha, max(n, p),
                                 np.finfo(dtype).eps)

        def cost(B):  # ‖Yc − Xc B‖² + α‖B‖², the residual on the device
            R = Yc - Xc @ xp.asarray(np.ascontiguousarray(B), device=device)
            return float(xp.sum(R * R)) + alpha * float(np.sum(B * B))

        if r < q and r < p:
            obj = RRRObjective.from_statistics(B, H, F, cost(B), to_host(x_mean),
                                               to_host(y_mean), r, alpha=alpha)
            res = solve_and_warn(self, obj, start_point(self.start, obj))
            self.M_ = np.asarray(res.M, dtype=float)
            (U, S, W), B = obj.svd_factors(self.M_), obj.coef(self.M_)
            self.objective_, self.result_, self.n_iter_ = obj, res, res.n_iter
        else:  # the rank constraint is void: ridge regression in closed form
            U, S, W = _top_factors(B, r)
            self.M_, self.objective_, self.result_, self.n_iter_ = None, None, None, 0
        self._finish(to_host(x_mean), to_host(y_mean), B, U, S, W, y.ndim, r)
        self.cost_ = cost(B)
        cast_fitted(self, dtype)
        to_namespace(self, xp, device)
        return self

    def transform(self, X) -> np.ndarray:
        """The low-dimensional scores ``(X − mean_) @ components_.T`` (the survey's S Vᵀ x)."""
        check_is_fitted(self, "components_")
        space = namespace_of(X, fitted=self)
        if space is not None:
            return project_in(self, X, *space, self.mean_, self.components_.T)
        return project_centered(self, X)

    def predict(self, X) -> np.ndarray:
        """``X @ coef_.T + intercept_``."""
        check_is_fitted(self, "coef_")
        space = namespace_of(X, fitted=self, method="predict")
        if space is not None:  # in X's namespace, on its device
            xp, device = space
            X = validate_data(self, X, reset=False, dtype=[xp.float64, xp.float32])
            coef = moved(self.coef_, xp, device)
            intercept = (self.intercept_ if isinstance(self.intercept_, float)
                         else moved(self.intercept_, xp, device))
            Z = xp.astype(X, coef.dtype) @ (coef if coef.ndim == 1 else coef.T) + intercept
            return xp.astype(Z, X.dtype)
        X = validate_data(self, X, reset=False, dtype=FLOAT_DTYPES)
        return as_output(X @ self.coef_.T + self.intercept_, output_dtype(X))


def _ridge(X, Y, alpha: float, r: int, eps: float):
    """Full-rank ridge (α = 0: minimum-norm least squares) B and its rank-r SVD factors."""
    B = ridge_factors(X - X.mean(axis=0), Y - Y.mean(axis=0), alpha, eps)[0]
    return (B, *_top_factors(B, r))


def _top_factors(B, r: int):
    """B's top-r singular factors ``(U, S, W)``, each column of U with its largest-magnitude
    entry positive."""
    Ub, Sb, Vbt = np.linalg.svd(B, full_matrices=False)
    Ub, Sb, Vbt = Ub[:, :r], Sb[:r], Vbt[:r]
    signs = np.sign(Ub[np.argmax(np.abs(Ub), axis=0), np.arange(Ub.shape[1])])
    signs[signs == 0] = 1.0
    return Ub * signs, Sb, Vbt.T * signs
