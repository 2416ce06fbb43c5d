"""Reduced-rank (ridge) regression as a scikit-learn regressor and transformer (survey §3.2.4).

:class:`ReducedRankRegression` follows :class:`sklearn.cross_decomposition.PLSRegression`'s
API: ``fit(X, y)``, ``predict(X)``, ``score`` (R², from RegressorMixin) and
``transform(X)`` (the low-dimensional scores of X).  The rank-r coefficient minimizes
‖Y − XB‖² + α‖B‖²_F, found on the Grassmann manifold of the output space
(:mod:`ldr.objectives.rrr`).

The n-row work — centring, the thin SVD of X, UᵀY and the fit's residual — runs in X's array
namespace (under scikit-learn's ``array_api_dispatch`` a PyTorch tensor's, on its device);
the p×q and q×q statistics of :func:`ldr.objectives.rrr.ridge_from_svd` come to the host,
where the Grassmann program is solved.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import MultiOutputMixin, RegressorMixin

from ldr.data import arrays
from ldr.data.validation import validate_data
from ldr.estimators.base import (
    AffineMap,
    FitData,
    LinearDR,
    check_int_components,
    closed_form_result,
    same_space,
)
from ldr.objectives.rrr import ReducedRankRegression as RRRObjective
from ldr.objectives.rrr import check_alpha, ridge_from_svd

__all__ = ["ReducedRankRegression"]


class ReducedRankRegression(RegressorMixin, MultiOutputMixin, LinearDR):
    """Linear regression with a coefficient of rank ≤ r and a ridge penalty (survey Eq. 25).

    Minimizes ‖Y − XB − 1bᵀ‖²_F + α‖B‖²_F over B (n_features × n_targets) of rank ≤ r and an
    unpenalized intercept b.  For r < n_targets this is the Grassmann program of
    :class:`ldr.objectives.ReducedRankRegression`, solved by :func:`ldr.solve`; for
    r = min(n_features, n_targets) the rank constraint is void and the answer is ridge
    regression (α = 0: least squares), computed in closed form (``result_.solver`` is
    "closed-form" and ``M_`` None then).

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
    tol, max_iter, solver_params, verbose, warm_start : see :class:`~ldr.estimators.LinearDR`
        The gradient tolerance, the iteration budget and the other options of
        :func:`ldr.solve`.
    random_state : int, RandomState or None, default 0
        Seeds a random start.

    float32 X gives float32 fitted arrays, scores and predictions; the fit itself runs in
    float64, with α = 0's rank threshold at float32's
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

    _computes_in_namespace = True
    _objective_class = RRRObjective

    def __init__(self, n_components=None, *, alpha=0.0, solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, verbose=0, random_state=0, warm_start=False):
        self.n_components = n_components
        self.alpha = alpha
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _requires_y(self) -> bool:
        return True

    def _reads_chunks(self) -> bool:
        return False

    def _validate_with_y(self, X, y, dtypes) -> tuple:
        space = arrays.input_space(X)
        if space is not None and arrays.input_space(y) != space:  # y to X's namespace and device
            y = space[0].asarray(np.ascontiguousarray(np.asarray(arrays.to_host(y), float)),
                                 device=space[1])
        return validate_data(self, X, y, dtype=dtypes, ensure_min_samples=2,
                             multi_output=True, y_numeric=True)

    def _prepare(self, data: FitData) -> None:
        """The means, the thin SVD of the centered X and the ridge statistics (in X's
        namespace; the p×q and q×q results on the host)."""
        xp = arrays.namespace(data.X)
        X = data.X
        Y = data.y if data.y.dtype == xp.float64 else xp.astype(data.y, xp.float64)
        data.derived["y_ndim"] = Y.ndim
        Y = Y[:, None] if Y.ndim == 1 else Y
        alpha = check_alpha(self.alpha)
        x_mean = xp.mean(X, axis=0)
        y_mean = xp.mean(Y, axis=0)
        Xc = X - x_mean
        Yc = Y - y_mean
        U, s, Wt = xp.linalg.svd(Xc, full_matrices=False)
        n, p = X.shape
        eps = np.finfo(data.dtype).eps  # collinear to the data's own precision
        B, H, F = ridge_from_svd(arrays.to_host(s), arrays.to_host(Wt),
                                 arrays.to_host(U.T @ Yc), alpha, max(n, p), eps)

        def cost(B):  # ‖Yc − Xc B‖² + α‖B‖², the residual in X's namespace
            R = Yc - Xc @ arrays.like(np.ascontiguousarray(B), Xc)
            return float(xp.sum(R * R)) + alpha * float(np.sum(B * B))

        data.derived.update(alpha=alpha, ridge=(B, H, F), cost=cost, q=Y.shape[1],
                            means=(arrays.to_host(x_mean), arrays.to_host(y_mean)))

    def _n_components(self, data: FitData) -> int:
        p = data.n_features
        q = data.derived["q"]
        return check_int_components(min(p, q) if self.n_components is None
                                    else self.n_components, min(p, q),
                                    "min(n_features, n_targets)")

    def _objective(self, data: FitData, r: int):
        """The Grassmann program when the rank constrains the fit, else None (ridge)."""
        q = data.derived["q"]
        if not (r < q and r < data.n_features):
            return None
        B, H, F = data.derived["ridge"]
        x_mean, y_mean = data.derived["means"]
        return RRRObjective.from_statistics(B, H, F, data.derived["cost"](B), x_mean, y_mean,
                                            r, alpha=data.derived["alpha"])

    def _closed_form(self, data: FitData, r: int):
        """The rank constraint is void: ridge regression in closed form."""
        B = data.derived["ridge"][0]
        return closed_form_result(None, data.derived["cost"](B),
                                  "the rank constraint is void: ridge regression")

    def _finish(self, data: FitData, obj, result):
        if obj is None:
            B = data.derived["ridge"][0]
            U, S, W = top_factors(B, self.n_components_)
            M = None
        else:
            M = np.asarray(result.M, dtype=float)
            U, S, W = obj.svd_factors(M)
            B = obj.coef(M)
        x_mean, y_mean = data.derived["means"]
        self.mean_ = x_mean
        self.y_mean_ = y_mean
        self.components_ = (U * S).T
        self.y_loadings_ = W
        intercept = y_mean - x_mean @ B
        one = data.derived["y_ndim"] == 1
        self.coef_ = B.T[0] if one else B.T
        self.intercept_ = float(intercept[0]) if one else intercept
        self.cost_ = data.derived["cost"](B)
        return M

    def _components(self, data: FitData, obj, M):
        return self.components_

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        """The low-dimensional scores ``(X − mean_) @ components_.T`` (the survey's
        S Vᵀ x)."""
        return AffineMap(self.mean_, self.components_.T)

    def predict(self, X):
        """``X @ coef_.T + intercept_`` (in X's namespace, in float64, returned in X's
        dtype)."""
        X = self._check_rows(X, "predict")
        xp = arrays.namespace(X)
        X64 = X if X.dtype == xp.float64 else xp.astype(X, xp.float64)
        coef = same_space(self.coef_, X64)
        intercept = self.intercept_ if isinstance(self.intercept_, float) \
            else same_space(self.intercept_, X64)
        Z = X64 @ (coef if coef.ndim == 1 else coef.T) + intercept
        return Z if X.dtype == xp.float64 else xp.astype(Z, X.dtype)


def top_factors(B, r: int):
    """B's top-r singular factors ``(U, S, W)``, each column of U with its largest-magnitude
    entry positive."""
    Ub, Sb, Vbt = np.linalg.svd(B, full_matrices=False)
    Ub = Ub[:, :r]
    Sb = Sb[:r]
    Vbt = Vbt[:r]
    signs = np.sign(Ub[np.argmax(np.abs(Ub), axis=0), np.arange(Ub.shape[1])])
    signs[signs == 0] = 1.0
    return Ub * signs, Sb, Vbt.T * signs
