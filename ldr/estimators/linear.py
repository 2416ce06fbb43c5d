"""scikit-learn transformers for the objectives of :mod:`ldr.objectives`.

:class:`LinearDR` wraps **any** objective whose constructor reads ``cls(X, r, **params)``
(unsupervised) or ``cls(X, y, r, **params)`` (supervised — the second positional parameter is
named ``y``): ``fit`` validates the data with scikit-learn's ``validate_data``, builds the
objective, minimizes it with :func:`ldr.solve` and keeps the answer; ``transform`` is the
objective's own ``transform(X, M)``.  An unconverged run is never silent: it raises a
:class:`~sklearn.exceptions.ConvergenceWarning` that quotes the driver's stopping reason.

The concrete estimators (:class:`PCA`, :class:`OrthogonalLDA`, ...) are thin subclasses that
fix the objective and expose its parameters as explicit ``__init__`` arguments, so that
``get_params``, ``clone`` and ``GridSearchCV`` see them.  A new one takes a few lines::

    class MyMethod(LinearDR):
        _objective_class = ldr.objectives.MyObjective
        _objective_args = ("alpha",)          # forwarded as MyObjective(X, r, alpha=...)

        def __init__(self, n_components=2, alpha=1.0, solver="trust-region",
                     start="heuristic", solver_params=None, random_state=None):
            self.n_components, self.alpha = n_components, alpha
            self.solver, self.start = solver, start
            self.solver_params, self.random_state = solver_params, random_state

Layout of the answer
--------------------
ldr's point ``M`` is d×r with orthonormal columns and the projection is ``X @ M``: it is kept
as ``M_`` (and ``result_.M``), in ldr's layout.  ``components_`` keeps scikit-learn's meaning
— one component per **row**, shape (n_components, n_features) — as in
``sklearn.decomposition.PCA`` and in ldr's HSIC and WDA estimators.  One name, one layout
across the ecosystem: code written for scikit-learn's PCA reads ``ldr.estimators.PCA``
correctly, and no attribute of the same name changes its shape between libraries.  So:

* orthogonal projections (PCA, LDA, MAF, MDS, LPP/NPE, KernelSDR): ``components_ == M_.T``
  and ``transform(X) == (X − mean_) @ components_.T``;
* mappings that whiten first (SFA; LPP/NPE with ``form="whitened"``): ``components_`` is the
  whole linear map, so that the same identity holds (it is not orthonormal);
* latent-variable models (PPCA, FactorAnalysis): the loadings Wᵀ, as in scikit-learn's
  FactorAnalysis; ``transform`` is the posterior mean.

dtype and feature names
-----------------------
float32 X gives float32 fitted arrays (``M_``, ``components_``, ``mean_``, scores arrays) and
float32 ``transform`` output; the objective is built and solved in float64 (X is upcast once
when the objective is built), and ``objective_`` and ``result_`` keep float64
(:mod:`ldr.estimators.output`).  Dask input stays float64.  Outputs are named
``<classname><i>`` by ``get_feature_names_out``, so ``set_output(transform="pandas")`` works.
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    TransformerMixin,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ldr._validation import check_labels, check_nonsingular, shrink
from ldr.driver import _check_tolerances, _solver_list, solve
from ldr.estimators._gaussian import (
    check_priors,
    gaussian_linear_rule,
    minka_dimension,
    ppca_covariance,
    ppca_precision,
)
from ldr.estimators.output import (
    FLOAT_DTYPES,
    OutputMixin,
    as_output,
    cast_fitted,
    output_dtype,
)
from ldr.objective import Objective
from ldr.objectives.graph import LPP as LPPObjective
from ldr.objectives.graph import NPE as NPEObjective
from ldr.objectives.ksdr import KernelSDR as KernelSDRObjective
from ldr.objectives.latent import PPCA as PPCAObjective
from ldr.objectives.latent import FactorAnalysis as FactorAnalysisObjective
from ldr.objectives.lda import LDA
from ldr.objectives.maf import MAF as MAFObjective
from ldr.objectives.mds import MDS as MDSObjective
from ldr.objectives.pca import PCA as PCAObjective
from ldr.objectives.sfa import SFA as SFAObjective
from ldr.result import Result, Trace
from ldr.rows import as_dask_array, is_lazy, map_rows, moments, refuse_lazy

_DRIVER_OWNED = ("M0", "seed")


def resolve_objective(objective) -> type:
    """An Objective subclass, given as a class or by its name in :mod:`ldr.objectives`."""
    if isinstance(objective, str):
        import ldr.objectives

        found = getattr(ldr.objectives, objective, None)
        if found is None:
            raise ValueError(f"objective: ldr.objectives has no {objective!r}; available: "
                             f"{sorted(ldr.objectives.__all__)}")
        objective = found
    if not (isinstance(objective, type) and issubclass(objective, Objective)):
        raise ValueError(f"objective: expected an ldr.Objective subclass (or its name in "
                         f"ldr.objectives), got {objective!r}")
    return objective


def requires_y(cls: type) -> bool:
    """Whether ``cls`` is built as ``cls(X, y, r, ...)`` (True) or ``cls(X, r, ...)`` (False)."""
    names = [p.name for p in inspect.signature(cls).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) >= 2 and names[1] == "r":
        return False
    if len(names) >= 3 and names[1] == "y" and names[2] == "r":
        return True
    raise ValueError(f"objective: {cls.__name__}({', '.join(names)}) is not of the form "
                     f"cls(X, r, ...) or cls(X, y, r, ...); write a LinearDR subclass that "
                     f"overrides _make_objective for it")


def _seed(random_state):
    """An int or None for :func:`ldr.solve` from a scikit-learn ``random_state``."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        return random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def check_n_components(n_components, n_features: int, default: int | None = None) -> int:
    """``n_components`` as an int with 1 <= n_components < n_features; None is ``default``
    (the method's natural maximum; n_features − 1, the largest proper subspace, if None)."""
    q = n_components
    if q is None:
        q = n_features - 1 if default is None else default
        if q < 1:
            raise ValueError(f"n_components: None means the largest proper subspace, but "
                             f"n_features = {n_features} leaves none: pass data with at least "
                             f"two features")
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q < n_features:
        raise ValueError(f"n_components: must be an integer with 1 <= n_components < "
                         f"n_features = {n_features}, got {q!r}")
    return int(q)


def check_int_components(q, upper: int, bound: str, other: str = "") -> int:
    """An integer ``n_components`` with ``1 <= q <= upper`` (``bound`` names the upper limit,
    ``other`` the other accepted forms, for the message)."""
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q <= upper:
        raise ValueError(f"n_components: must be None or an integer with 1 <= n_components <= "
                         f"{bound} = {upper}{other}, got {q!r}")
    return int(q)


def warn_if_unconverged(estimator, res, remedy: str, what: str = "the solver",
                        stacklevel: int = 4) -> None:
    """A :class:`~sklearn.exceptions.ConvergenceWarning` quoting the driver's reason when
    ``res`` (an :class:`ldr.Result`) did not converge: no estimator fits silently."""
    if not res.converged:
        warnings.warn(f"{type(estimator).__name__}: {what} {res.solver!r} did not converge "
                      f"({res.reason}); {remedy}", ConvergenceWarning, stacklevel=stacklevel)


def converged_alternation(estimator, change: float, what: str, stacklevel: int = 3) -> bool:
    """Whether an alternation (``max_outer`` rounds, ``outer_tol`` on the change of ``what``)
    converged; a :class:`~sklearn.exceptions.ConvergenceWarning` when it did not."""
    converged = change <= estimator.outer_tol
    if not converged:
        warnings.warn(f"{type(estimator).__name__}: the alternation did not converge in "
                      f"max_outer={estimator.max_outer} rounds (last change of {what} "
                      f"{change:.2e} > outer_tol {estimator.outer_tol:g}); raise max_outer or "
                      "loosen outer_tol", ConvergenceWarning, stacklevel=stacklevel)
    return converged


def solve_and_warn(estimator, obj: Objective, M0):
    """``ldr.solve`` with the estimator's solver settings; warn when it did not converge."""
    params = dict(estimator.solver_params or {})
    owned = [k for k in _DRIVER_OWNED if k in params]
    if owned:
        raise ValueError(f"solver_params: {owned} are set by the estimator; use start= for "
                         f"the start point and random_state= for the seed")
    res = solve(obj, estimator.solver, M0=M0, seed=_seed(estimator.random_state), **params)
    warn_if_unconverged(estimator, res, "raise max_iter or max_time through solver_params, "
                        "or loosen gtol/xtol")
    # autograd's cached gradient closure is rebuilt on demand and cannot be pickled
    obj.__dict__.pop("_ag_grad", None)
    return res


def start_point(start, obj: Objective):
    """``start``: "heuristic" (the objective's, else a seeded random point), "random",
    None (the solver's own default start) or an array."""
    if isinstance(start, str):
        if start == "heuristic":
            return "heuristic" if obj.provides("heuristic") else "random"
        if start == "random":
            return "random"
        raise ValueError(f"start: expected 'heuristic', 'random', None or an array, "
                         f"got {start!r}")
    return start


class LinearDR(OutputMixin, TransformerMixin, BaseEstimator):
    """Any ldr objective of the form ``cls(X, [y,] r, **params)`` as a transformer.

    Parameters
    ----------
    objective : Objective subclass or its name in :mod:`ldr.objectives`
        Supervised when its constructor reads ``cls(X, y, r, ...)``: ``fit`` then needs y.
    n_components : int or None, default None
        r, the subspace dimension, 1 <= r < n_features; None: the natural maximum, the
        objective's ``max_rank(X, y)`` where it defines one (LDA: min(n_features, n_classes)
        − 1), else n_features − 1, the largest proper subspace (at r = n_features every cost
        on a Grassmann manifold is constant).
    solver : str, Solver or list of them, default "trust-region"
        Any solver :func:`ldr.solve` accepts (a list chains them).
    start : "heuristic", "random", None or array, default "heuristic"
        The start point: the objective's eigenvector heuristic where it has one, else a
        random point seeded by ``random_state``; "random"; None for the solver's own default
        (ISM: eigenvectors of Φ₀); or an explicit d×r orthonormal array.
    objective_params : dict, optional
        Keyword arguments of the objective's constructor.
    solver_params : dict, optional
        Stopping rules and options of :func:`ldr.solve` (``gtol``, ``xtol``, ``ftol``,
        ``max_iter``, ``max_time``, ``certify``, ``callback``).
    random_state : int, RandomState or None
        Seeds random starts (the only randomness).

    Attributes
    ----------
    M_ : (n_features, n_components) orthonormal, or a tuple on a product manifold
        The solution in ldr's layout: ``transform`` is ``objective_.transform(X, M_)``
        (``(X - mean_) @ M_`` for most methods).
    components_ : (n_components, n_features)
        ``M_.T``: one component per row, scikit-learn's layout (module docstring).  Not set
        by the generic estimator when ``M_`` is a tuple (a product manifold); the concrete
        estimators of such objectives define it (PPCA, FactorAnalysis: the loadings Wᵀ).
    n_components_ : int
    cost_ : float
        The objective's cost at ``M_`` (a cost to minimize).
    n_iter_ : int
        Solver iterations.
    result_ : ldr.Result
        The driver's full record (reason, trace, oracle counts, certificate if requested).
    objective_ : ldr.Objective
        The fitted objective (it holds the statistics of the training data).
    mean_ : (n_features,)
        The training mean, where the objective centers the data.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> est = LinearDR("LDA", n_components=2, objective_params={"reg": 0.01}).fit(X, y)
    >>> est.transform(X).shape, est.M_.shape, est.components_.shape
    ((178, 2), (13, 2), (2, 13))
    >>> bool(np.allclose(est.M_.T @ est.M_, np.eye(2)))
    True
    """

    _required_parameters = ["objective"]
    _objective_class: type | None = None  # fixed by the concrete subclasses
    _objective_args: tuple[str, ...] = ()  # their __init__ arguments forwarded to it
    _pairwise_memory = False  # forms n×n matrices (for the memory stated on a Dask array)

    def __init__(self, objective, n_components=None, solver="trust-region", start="heuristic",
                 objective_params=None, solver_params=None, random_state=None):
        self.objective, self.n_components = objective, n_components
        self.solver, self.start = solver, start
        self.objective_params, self.solver_params = objective_params, solver_params
        self.random_state = random_state

    # --- the objective ----------------------------------------------------------------------
    def _objective_spec(self) -> tuple[type, dict]:
        if self._objective_class is not None:
            return self._objective_class, {k: getattr(self, k) for k in self._objective_args}
        params = self.objective_params or {}
        if not isinstance(params, dict):
            raise ValueError(f"objective_params: expected a dict, got {params!r}")
        return resolve_objective(self.objective), dict(params)

    def _requires_y(self) -> bool:
        return requires_y(self._objective_spec()[0])

    def _make_objective(self, X, y, r: int) -> Objective:
        cls, params = self._objective_spec()
        try:
            return cls(X, y, r, **params) if requires_y(cls) else cls(X, r, **params)
        except ValueError as exc:
            msg = str(exc)
            if msg.startswith("r:"):  # the objective's r is the estimator's n_components
                raise ValueError("n_components:" + msg[2:]) from None
            raise

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            tags.target_tags.required = self._requires_y()
        except ValueError:  # an invalid objective is reported by fit, not by the tags
            tags.target_tags.required = False
        return tags

    # --- fitting ----------------------------------------------------------------------------
    def _validate(self, X, y):
        if self._requires_y():
            if y is None:
                raise ValueError(
                    f"{type(self).__name__} requires y to be passed, but the target y is None: "
                    f"{self._objective_spec()[0].__name__} is supervised; call fit(X, y)")
            return validate_data(self, X, y, dtype=FLOAT_DTYPES, ensure_min_samples=2,
                                 multi_output=True)
        return validate_data(self, X, dtype=FLOAT_DTYPES, ensure_min_samples=2), None

    def _validate_lazy(self, X, y):
        """A Dask array (or DataFrame) X, kept lazy: only the objectives that read rows in
        chunks (``accepts_chunks``) take it; the others raise, stating the memory needed."""
        cls = self._objective_spec()[0]
        if not getattr(cls, "accepts_chunks", False):
            refuse_lazy(X if is_lazy(X) else y, "X" if is_lazy(X) else "y",
                        type(self).__name__, pairwise=self._pairwise_memory)
        if not isinstance(X, np.memmap):  # a memmap is read in row chunks by ldr.rows
            X = as_dask_array(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X: expected a 2-D array of shape (n_samples, n_features), got "
                             f"a Dask array with shape {X.shape}")
        if self._requires_y() and y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: "
                f"{cls.__name__} is supervised; call fit(X, y)")
        self.n_features_in_ = int(X.shape[1])
        self.__dict__.pop("feature_names_in_", None)
        return X, y

    def fit(self, X, y=None) -> LinearDR:
        """Build the objective on (X[, y]) and minimize it; returns self.

        ``X`` may be a Dask array (or a Dask DataFrame) or an ``np.memmap`` for the objectives
        whose statistics are computed in one pass by :mod:`ldr.rows` (PCA, OrthogonalLDA,
        MAF, SFA, PPCA, FactorAnalysis): nothing is materialized; the others raise a
        ValueError stating the memory they would need (Dask) or load the memmap.
        """
        chunked = is_lazy(X) or is_lazy(y) or (
            isinstance(X, np.memmap) and getattr(self._objective_spec()[0], "accepts_chunks",
                                                 False))
        X, y = self._validate_lazy(X, y) if chunked else self._validate(X, y)
        dtype = np.float64 if chunked else output_dtype(X)
        r = check_n_components(self.n_components, X.shape[1], self._natural_n_components(X, y))
        obj = self._make_objective(X, y, r)
        res = solve_and_warn(self, obj, start_point(self.start, obj))
        self.objective_, self.result_ = obj, res
        M = res.M if isinstance(res.M, tuple) else np.asarray(res.M, dtype=float)
        self.M_ = self._finalize(obj, M)
        components = self._components(obj, self.M_)
        if components is not None:
            self.components_ = components
        self.n_components_ = r
        self.cost_, self.n_iter_ = float(res.cost), res.n_iter
        if getattr(obj, "mean_", None) is not None:
            self.mean_ = np.asarray(obj.mean_)
        cast_fitted(self, dtype)  # float32 in, float32 out (ldr.estimators.output)
        return self

    def _natural_n_components(self, X, y) -> int | None:
        """``n_components=None``: the objective's ``max_rank(X, y)`` where it defines one
        (LDA: min(n_features, n_classes) − 1), else None (n_features − 1)."""
        if self.n_components is not None:
            return None
        max_rank = getattr(self._objective_spec()[0], "max_rank", None)
        return None if max_rank is None else max_rank(X, y)

    def _finalize(self, obj: Objective, M):
        """Hook: the point to keep (a subclass may rotate a Grassmann answer); sets scores."""
        return M

    def _components(self, obj: Objective, M):
        """Hook: ``components_`` (r×d); ``M.T`` for a single factor, unset on a product."""
        return None if isinstance(M, tuple) else M.T

    def transform(self, X) -> np.ndarray:
        """The objective's mapping of X onto the learned subspace (usually ``(X − mean_) M_``),
        computed in float64; float32 for float32 X."""
        check_is_fitted(self, "M_")
        if is_lazy(X):  # a lazy Dask array, block by block (map_blocks)
            return map_rows(X, self._transform_block, self.n_features_in_,
                            self.n_components_)
        X = validate_data(self, X, reset=False, dtype=FLOAT_DTYPES)
        return as_output(self.objective_.transform(X, self.M_), output_dtype(X))

    def _transform_block(self, X):
        return self.objective_.transform(X, self.M_)


def _sign_rule(M: np.ndarray) -> np.ndarray:
    """scikit-learn's sign rule (``svd_flip`` on the components): the largest entry of each
    column of M is positive."""
    rows = np.argmax(np.abs(M), axis=0)
    signs = np.sign(M[rows, np.arange(M.shape[1])])
    return M * np.where(signs == 0, 1.0, signs)


def _whole_space(estimator, M: np.ndarray, cost: float, how: str) -> Result:
    """The record of a fit with n_components = n_features: the Grassmann manifold of d-planes
    in R^d is one point, so there is nothing to optimize (no solver runs).  The solver
    settings it does not use are still checked, so a typo never passes silently."""
    params = dict(estimator.solver_params or {})
    owned = [k for k in _DRIVER_OWNED if k in params]
    if owned:
        raise ValueError(f"solver_params: {owned} are set by the estimator; use start= for "
                         f"the start point and random_state= for the seed")
    try:
        bound = inspect.signature(solve).bind(None, estimator.solver, **params)
    except TypeError as exc:
        raise ValueError(f"solver_params: {exc}") from None
    bound.apply_defaults()
    a = bound.arguments
    _check_tolerances(a["gtol"], a["xtol"], a["ftol"], a["max_iter"], a["max_time"],
                      a["gtol_scale"])
    _solver_list(estimator.solver)
    if isinstance(estimator.start, str) and estimator.start not in ("heuristic", "random"):
        start_point(estimator.start, None)
    return Result(M=M, cost=float(cost), converged=True, n_iter=0, time=0.0, grad_norm=0.0,
                  trace=Trace(), solver="closed-form",
                  reason=f"n_components = n_features: the whole space, nothing to optimize "
                         f"({how})")


class _ProjectionAPI(TransformerMixin):
    """``transform`` as ``(X − mean_) @ components_.T``, float32 kept (PCA, OrthogonalLDA); a
    TransformerMixin itself, so that ``set_output`` wraps this ``transform``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _fit_data(self, X, y):
        """(dtype of the fitted attributes, validated X, y, :class:`ldr.rows.Moments`)."""
        dtype = output_dtype(X)
        chunked = is_lazy(X) or is_lazy(y) or isinstance(X, np.memmap)
        X, y = self._validate_lazy(X, y) if chunked else self._validate(X, y)
        return dtype, X, y, moments(X, y, name="X")

    def transform(self, X) -> np.ndarray:
        """``(X − mean_) @ components_.T`` (PCA divides by ``√explained_variance_`` when
        ``whiten``); float32 stays float32, a Dask array stays lazy."""
        check_is_fitted(self, "M_")
        if is_lazy(X):
            return map_rows(X, self._transform_block, self.n_features_in_,
                            self.n_components_)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return self._transform_block(X)

    def _transform_block(self, X):
        return (X - self.mean_) @ self.components_.T


class PCA(_ProjectionAPI, LinearDR):
    """Principal component analysis by manifold optimization (survey Eq. 2), with the API of
    :class:`sklearn.decomposition.PCA`.

    Minimizes −tr(MᵀCM) over orthonormal d×r M (:class:`ldr.objectives.PCA`, C the sample
    covariance divided by n − 1).  The heuristic start is the exact answer, so the default run
    stops at iteration 0; other solvers and starts reach the same subspace.  The basis is then
    rotated to the principal axes within it (eigenvectors of MᵀCM, largest variance first)
    with scikit-learn's sign rule (the largest entry of each component is positive), so
    ``components_`` matches ``sklearn.decomposition.PCA`` up to rounding where the
    eigenvalues are distinct.  With r = n_features the Grassmann manifold is a single point:
    no solver runs and the axes are the eigenvectors of C (``result_.solver`` is
    "closed-form", ``objective_`` is None).

    Parameters
    ----------
    n_components : None, int, float in (0, 1) or "mle", default None
        As in scikit-learn's PCA (full SVD): None keeps min(n_samples, n_features)
        components; an int 1 <= r <= min(n_samples, n_features); a float q in (0, 1) keeps the
        fewest components whose cumulative ``explained_variance_ratio_`` exceeds q; "mle"
        chooses r by Minka's evidence (needs n_samples >= n_features; Minka, NIPS 2000).
    whiten : bool, default False
        ``transform`` divides each component by √explained_variance_ (unit-variance
        outputs); ``inverse_transform`` multiplies back.
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR` (``components_ == M_.T``, orthonormal rows, also with whiten)
    explained_variance_ : (n_components,)
        Variance along each component: the eigenvalues of MᵀCM (C divided by n − 1).
    explained_variance_ratio_ : (n_components,)
        Its share of the total variance tr(C) (zeros for constant data).
    singular_values_ : (n_components,)
        The singular values of the centered data, ``‖(X − mean_) m_j‖`` (=
        ``√((n − 1) · explained_variance_)``); from the data when X is in memory, from that
        formula for a Dask array or memmap).
    noise_variance_ : float
        The probabilistic-PCA noise σ² (Tipping & Bishop, Eq. 12.46 in Bishop's PRML): the
        mean of the min(n_samples, n_features) − r discarded covariance eigenvalues; 0 when
        r = min(n_samples, n_features).
    n_samples_ : int

    Notes
    -----
    float32 data give float32 attributes and transforms (the statistics and the solver work
    in float64).  ``get_covariance`` does not depend on ``whiten`` (the model's covariance
    is one of the data); scikit-learn 1.9 scales the components by √explained_variance_
    there when ``whiten=True``, which changes the matrix it returns — a difference kept on
    purpose, and so ``get_precision``, ``score_samples`` and ``score`` (which read that
    covariance) differ from scikit-learn's with ``whiten=True`` too.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((100, 4)) * [4.0, 3.0, 2.0, 1.0]
    >>> est = PCA(n_components=2).fit(X)
    >>> bool(np.all(np.abs(est.components_.argmax(axis=1) - [0, 1]) == 0))
    True
    >>> est.explained_variance_ratio_.round(2)
    array([0.54, 0.26])
    >>> PCA(n_components=0.9).fit(X).n_components_, PCA().fit(X).n_components_
    (3, 4)
    """

    _objective_class = PCAObjective

    def __init__(self, n_components=None, whiten=False, solver="trust-region",
                 start="heuristic", solver_params=None, random_state=None):
        self.n_components, self.whiten, self.solver, self.start = (n_components, whiten,
                                                                   solver, start)
        self.solver_params, self.random_state = solver_params, random_state

    def _resolve_n_components(self, n: int, d: int, spectrum) -> int:
        """r from ``n_components`` (``spectrum()``: the covariance eigenvalues, largest first,
        and ``total``, computed only for a float or "mle")."""
        q, upper = self.n_components, min(n, d)
        if q is None:
            return upper
        if isinstance(q, str):
            if q != "mle":
                raise ValueError(f"n_components: the only string accepted is 'mle', got {q!r}")
            if n < d:
                raise ValueError(f"n_components='mle' is only supported if n_samples >= "
                                 f"n_features (got {n} < {d}); pass an int or a float in "
                                 f"(0, 1)")
            return minka_dimension(spectrum()[0], n)
        if isinstance(q, numbers.Real) and not isinstance(q, (numbers.Integral, bool)):
            if not 0.0 < q < 1.0:
                raise ValueError(f"n_components: a float must lie in (0, 1) (the fraction of "
                                 f"variance to keep), got {q!r}; pass an int for a count")
            w, total = spectrum()
            if total <= 0:
                return 1
            ratio = np.cumsum(w[:upper] / total)
            return min(int(np.searchsorted(ratio, q, side="right")) + 1, upper)
        return check_int_components(q, upper, "min(n_samples, n_features)",
                                    " (or a float in (0, 1), or 'mle')")

    def fit(self, X, y=None) -> PCA:
        """Fit the principal subspace of X (y is ignored); returns self."""
        if not isinstance(self.whiten, (bool, np.bool_)):
            raise ValueError(f"whiten: expected True or False, got {self.whiten!r}")
        dtype, X, _, stats = self._fit_data(X, None)
        n, d = stats.n, stats.d
        C = stats.covariance(ddof=1)
        total = float(np.trace(C))
        eig: list = []

        def spectrum():
            if not eig:
                w, V = scipy.linalg.eigh(C)
                eig.extend([np.maximum(w[::-1], 0.0), V[:, ::-1]])
            return eig[0], total

        r = self._resolve_n_components(n, d, spectrum)
        if r < d:
            obj = PCAObjective(stats, r)
            res = solve_and_warn(self, obj, start_point(self.start, obj))
            M = np.asarray(res.M, dtype=float)
            w, V = np.linalg.eigh(M.T @ C @ M)
            M, w = M @ V[:, ::-1], np.maximum(w[::-1], 0.0)
        else:
            spectrum()
            obj, (w, M) = None, (eig[0], eig[1])
            res = _whole_space(self, M, -np.sum(w), "the principal axes are the eigenvectors of C")
        M = _sign_rule(M)
        kept = min(n, d)
        if r < kept:
            rest = eig[0][r:kept] if eig else None
            noise = (float(np.mean(rest)) if rest is not None
                     else max(total - float(np.sum(w)), 0.0) / (kept - r))
            # by subtraction the noise carries an error of about eps·tr(C): never above the
            # smallest kept variance (the PPCA solution's order), 0 at rounding level
            noise = min(noise, float(w[-1]))
            if noise <= 16 * np.finfo(float).eps * max(total, 0.0):
                noise = 0.0
        else:
            noise = 0.0
        self.objective_, self.result_ = obj, res
        self.M_, self.components_ = M.astype(dtype), M.T.astype(dtype)
        self.mean_ = np.asarray(stats.mean, dtype=dtype)
        self.explained_variance_ = w.astype(dtype)
        ratio = w / total if total > 0 else np.zeros_like(w)
        self.explained_variance_ratio_ = ratio.astype(dtype)
        # from the data where they are in memory: √((n − 1)λ) loses half the digits of a
        # singular value near zero (an error of √ε·σ₁ instead of ε·σ₁)
        sv = (np.linalg.norm((X - stats.mean) @ M, axis=0) if isinstance(X, np.ndarray)
              and not isinstance(X, np.memmap) else np.sqrt(w * (n - 1)))
        self.singular_values_ = sv.astype(dtype)
        self.noise_variance_ = float(noise)
        self.n_components_, self.n_samples_ = r, n
        self.cost_, self.n_iter_ = float(res.cost), res.n_iter
        return self

    def _transform_block(self, X):
        Z = (X - self.mean_) @ self.components_.T
        if self.whiten:  # as scikit-learn: a zero variance is clipped to the dtype's eps
            scale = np.sqrt(self.explained_variance_)
            Z = Z / np.maximum(scale, np.finfo(scale.dtype).eps)
        return Z

    def inverse_transform(self, X) -> np.ndarray:
        """Back to the feature space: ``X @ components_ + mean_`` (× ``√explained_variance_`` per
        component first when ``whiten``) — exact for data in the principal subspace."""
        check_is_fitted(self, "M_")
        X = check_array(X, dtype=[np.float64, np.float32], input_name="X")
        if X.shape[1] != self.n_components_:
            raise ValueError(f"X: has {X.shape[1]} columns, but {type(self).__name__} has "
                             f"n_components_ = {self.n_components_}")
        V = self.components_
        if self.whiten:
            V = np.sqrt(self.explained_variance_)[:, None] * V
        return X @ V + self.mean_

    def get_covariance(self) -> np.ndarray:
        """The probabilistic-PCA covariance Vᵀ diag(max(λ − σ², 0)) V + σ² I of the data
        (V = ``components_``, λ = ``explained_variance_``, σ² = ``noise_variance_``)."""
        check_is_fitted(self, "M_")
        C = ppca_covariance(np.asarray(self.components_, float),
                            np.asarray(self.explained_variance_, float), self.noise_variance_)
        return C.astype(self.components_.dtype)

    def get_precision(self) -> np.ndarray:
        """The inverse of :meth:`get_covariance`, by the matrix inversion lemma (σ² > 0)."""
        check_is_fitted(self, "M_")
        P = ppca_precision(np.asarray(self.components_, float),
                           np.asarray(self.explained_variance_, float), self.noise_variance_)
        return P.astype(self.components_.dtype)

    def score_samples(self, X) -> np.ndarray:
        """Log-likelihood of each row of X under ``N(mean_, get_covariance())``."""
        check_is_fitted(self, "M_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Xr = X - self.mean_
        # a singular covariance (rank-deficient data, all its directions kept) has no
        # density: ppca_precision says so (scikit-learn raises a LinAlgError there)
        P = ppca_precision(np.asarray(self.components_, float),
                           np.asarray(self.explained_variance_, float), self.noise_variance_)
        _, logdet = np.linalg.slogdet(P)
        return -0.5 * np.sum(Xr * (Xr @ P), axis=1) - 0.5 * (X.shape[1] * np.log(2 * np.pi)
                                                              - logdet)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the rows of X (scikit-learn's ``PCA.score``)."""
        return float(np.mean(self.score_samples(X)))


class OrthogonalLDA(_ProjectionAPI, ClassifierMixin, LinearDR):
    """Orthogonal LDA: maximize the quotient of traces tr(MᵀS_bM)/tr(MᵀS_wM) (survey Eq. 6),
    and classify in the projected space — scikit-learn's LDA API (transformer and classifier).

    The classical answer (eigenvectors of S_w⁻¹S_b) solves the trace of quotient, not this
    cost; the default run starts there and the trust-region solver improves on it, so
    ``ratio_`` is never below the heuristic's ratio.  The basis is then rotated within the
    subspace to the eigenvectors of MᵀS_bM (most between-class scatter first) with
    scikit-learn's sign rule.  With r = n_features (one feature, or n_features <
    n_classes) the subspace is the whole space: no solver runs.

    **The classifier** is the shared-covariance Gaussian model in the projected space: with
    ``z = Mᵀ(x − mean_)``, class means ``m_k = Mᵀ(μ_k − mean_)``, the pooled within-class covariance
    Σ = MᵀS_wM (S_w = (1/n) Σ_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ, shrunk by ``reg`` as in the
    fit — the normalization of scikit-learn's default ``solver="svd"``) and priors π_k (class
    frequencies unless ``priors`` is given), the posterior is

        p(k | x) ∝ π_k N(z; m_k, Σ),   log-odds δ_k(x) = zᵀΣ⁻¹m_k − ½ m_kᵀΣ⁻¹m_k + log π_k,

    linear in x: ``decision_function(X) == X @ coef_.T + intercept_``.

    **Agreement with** :class:`sklearn.discriminant_analysis.LinearDiscriminantAnalysis`
    (full-space LDA, same S_w and priors): the projected posterior equals the full one for
    every x exactly when span(M) ⊇ span{S_w⁻¹(μ_k − μ̄)} (the Gaussian discriminant
    directions).  That holds (i) for two classes with r = 1, where the trace-ratio optimum is
    the Rayleigh quotient's maximizer S_w⁻¹(μ₁ − μ₀) — ``predict_proba`` then agrees with
    scikit-learn's to ~1e-10 — and (ii) for r = n_features.  With three or more classes and
    r = n_classes − 1 < n_features, the trace-ratio subspace generally differs from the
    eigen-LDA subspace (that is the point of orthogonal LDA), so predictions agree only
    mostly.  Measured with r = 2 on standardized data: iris, the training predictions agree
    with scikit-learn's on 98.0% of the samples (accuracy 0.973 vs 0.980; 5-fold
    cross-validated 0.967 vs 0.980); wine, 98.9% (accuracy 0.989 vs 1.000; cross-validated
    0.989 vs 0.994).  On raw wine, whose features differ in scale by 10³, agreement falls to
    95.5% (accuracy 0.955 vs 1.000): standardize first.  tests/test_sklearn_parity.py keeps
    lower bounds on these.

    Parameters
    ----------
    n_components : int or None, default None
        r, 1 <= r <= min(n_classes − 1, n_features); None takes that maximum (as
        scikit-learn's LDA).
    reg : float in [0, 1], default 0
        Shrinkage of S_w towards tr(S_w)/d · I (needed when S_w is singular); the classifier
        uses the same shrunk S_w.
    priors : array of shape (n_classes,), optional
        Class priors of the classifier (non-negative, summing to 1); default the class
        frequencies.  The subspace itself is fitted with the class frequencies.
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR` (``objective_`` is None when r = n_features)
    ratio_ : float
        The trace ratio at ``M_`` on the training data (with the ``reg`` shrinkage).
    explained_variance_ratio_ : (n_components,)
        The share of the between-class scatter tr(S_b) kept by each component,
        m_jᵀS_bm_j / tr(S_b), decreasing.  Its sum is tr(MᵀS_bM)/tr(S_b) <= 1, equal to 1 when
        span(M) contains every class-mean difference (r = n_features, for instance).  This
        differs from scikit-learn's LDA, whose ratios are normalized generalized eigenvalues
        of (S_b, S_w) and sum to 1 at r = n_classes − 1: orthogonal LDA's components are
        orthonormal in the original metric, so the share of S_b they keep is the natural
        measure.
    classes_ : (n_classes,) the class labels
    priors_ : (n_classes,) the class priors used
    means_ : (n_classes, n_features) the class means
    coef_, intercept_ : (n_classes, n_features), (n_classes,)
        The linear decision rule (one row for two classes: class 1 against class 0, as in
        scikit-learn).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> pipe = make_pipeline(StandardScaler(), OrthogonalLDA())
    >>> bool(cross_val_score(pipe, X, y, cv=3).mean() > 0.95)
    True
    >>> pipe.fit(X, y)[-1].n_components_
    2
    """

    _objective_class = LDA
    _objective_args = ("reg",)

    def __init__(self, n_components=None, reg=0.0, priors=None, solver="trust-region",
                 start="heuristic", solver_params=None, random_state=None):
        self.n_components, self.reg, self.priors = n_components, reg, priors
        self.solver, self.start = solver, start
        self.solver_params, self.random_state = solver_params, random_state

    def _validate(self, X, y):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None: LDA is supervised; call fit(X, y)")
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        check_labels(y, X.shape[0], "y")
        return X, y

    def fit(self, X, y=None) -> OrthogonalLDA:
        """Fit the subspace and the classifier on (X, y); returns self."""
        dtype, X, y, stats = self._fit_data(X, y)
        classes, d = stats.labels, stats.d
        c = len(classes)
        if c < 2:
            raise ValueError(f"y: at least two classes are needed, got {c} "
                             f"({classes.tolist()!r})")
        upper = min(c - 1, d)
        if self.n_components is None:
            r = upper
        elif (isinstance(self.n_components, numbers.Integral)
              and not isinstance(self.n_components, bool) and self.n_components > upper
              and self.n_components >= 1):
            raise ValueError(
                f"n_components: LDA's between-class scatter has rank at most n_classes - 1 = "
                f"{c - 1}, so n_components must be <= min(n_classes - 1, n_features) = "
                f"{upper}; got {self.n_components}")
        else:
            r = check_int_components(self.n_components, upper, "min(n_classes - 1, n_features)")
        priors = (stats.class_counts / stats.n if self.priors is None
                  else check_priors(self.priors, c))
        if r < d:
            obj = LDA(stats, None, r, reg=self.reg)
            res = solve_and_warn(self, obj, start_point(self.start, obj))
            Sw, Sb, means = obj.Sw, obj.Sb, obj.means_
            M = np.asarray(res.M, dtype=float)
        else:
            Sw, Sb, means = stats.class_scatter()
            Sw = shrink(Sw, self.reg)
            check_nonsingular(Sw, "X", "within-class scatter S_w", "the LDA ratio is unbounded",
                              stats.n)
            obj, M = None, np.eye(d)
            res = _whole_space(self, M, -np.trace(Sb) / np.trace(Sw),
                               "every basis has the same trace ratio")
        w, V = np.linalg.eigh(M.T @ Sb @ M)
        M = _sign_rule(M @ V[:, ::-1])
        coef, intercept = gaussian_linear_rule(M, priors @ means, means, Sw, priors)
        if c == 2:
            coef, intercept = coef[1:] - coef[:1], intercept[1:] - intercept[:1]
        tb = float(np.trace(Sb))
        self.objective_, self.result_ = obj, res
        self.M_, self.components_ = M.astype(dtype), M.T.astype(dtype)
        self.mean_ = np.asarray(stats.mean, dtype=dtype)
        self.ratio_ = float(np.sum(M * (Sb @ M)) / np.sum(M * (Sw @ M)))
        evr = np.maximum(w[::-1], 0.0) / tb if tb > 0 else np.zeros(r)
        self.explained_variance_ratio_ = evr.astype(dtype)
        self.classes_, self.priors_ = classes, np.asarray(priors, dtype=dtype)
        self.means_ = np.asarray(means, dtype=dtype)
        self.coef_, self.intercept_ = coef.astype(dtype), intercept.astype(dtype)
        self.n_components_ = r
        self.cost_, self.n_iter_ = float(res.cost), res.n_iter
        return self

    def decision_function(self, X) -> np.ndarray:
        """``δ_k(x) = X @ coef_.T + intercept_``, the log-posterior up to a per-sample constant;
        for two classes the log-odds of class 1 against class 0, shape (n_samples,)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        D = X @ self.coef_.T + self.intercept_
        return D[:, 0] if len(self.classes_) == 2 else D

    def predict(self, X) -> np.ndarray:
        """The class of largest posterior (``decision_function``'s argmax, or its sign)."""
        D = self.decision_function(X)
        idx = (D > 0).astype(int) if D.ndim == 1 else np.argmax(D, axis=1)
        return self.classes_[idx]

    def predict_proba(self, X) -> np.ndarray:
        """Posterior probabilities p(k | x) of the Gaussian model, shape (n_samples, n_classes)."""
        D = self.decision_function(X)
        if D.ndim == 1:
            p = scipy.special.expit(D)
            return np.column_stack([1 - p, p])
        return scipy.special.softmax(D, axis=1)

    def predict_log_proba(self, X) -> np.ndarray:
        """log p(k | x), a zero probability mapped to log of the smallest normal (as
        scikit-learn)."""
        P = self.predict_proba(X)
        P[P == 0.0] += np.finfo(P.dtype).smallest_normal
        return np.log(P)

    def trace_ratio(self, X, y) -> float:
        """The trace ratio tr(S_b)/tr(S_w) of the projected data ``transform(X)`` with labels
        ``y`` (no shrinkage): how well the learned subspace separates these classes.
        (``score`` is the accuracy, as for every scikit-learn classifier.)"""
        Z = np.asarray(self.transform(X), dtype=float)
        _, codes = check_labels(y, Z.shape[0], "y")
        means = np.zeros((codes.max() + 1, Z.shape[1]))
        np.add.at(means, codes, Z)
        means /= np.bincount(codes)[:, None]
        within = np.sum((Z - means[codes]) ** 2)
        between = np.sum((means[codes] - Z.mean(axis=0)) ** 2)
        return float(between / within) if within > 0 else float("inf")


class MAF(LinearDR):
    """Maximum autocorrelation factors: maximize tr(MᵀΣ_δM)/tr(MᵀΣM) (survey Eq. 11–12).

    **The rows of X are the time order** (equally spaced samples): ``fit`` cannot tell, and
    shuffled rows give meaningless factors — keep MAF away from shuffling splitters.  The
    default run starts at the generalized eigenvectors of (Σ_δ, Σ) (the ratio-trace answer)
    and improves on them.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (at
        n_features the ratio is the constant tr(Σ_δ)/tr(Σ)).
    lag : int, default 1
        The time lag δ in samples, 1 <= lag < n_samples - 1.
    reg : float in [0, 1], default 0
        Shrinkage of Σ towards tr(Σ)/d · I (needed when Σ is singular).
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`
    autocorrelation_ : float
        tr(MᵀΣ_δM)/tr(MᵀΣM) at ``M_`` on the training series.

    Examples
    --------
    >>> import ldr
    >>> X = ldr.datasets.make_maf(300, 6, seed=0)
    >>> est = MAF(n_components=2).fit(X)
    >>> heuristic = est.objective_.heuristic()
    >>> bool(est.autocorrelation_ >= est.objective_.autocorrelation(heuristic))
    True
    """

    _objective_class = MAFObjective
    _objective_args = ("lag", "reg")

    def __init__(self, n_components=None, lag=1, reg=0.0, solver="trust-region",
                 start="heuristic", solver_params=None, random_state=None):
        self.n_components, self.lag, self.reg = n_components, lag, reg
        self.solver, self.start = solver, start
        self.solver_params, self.random_state = solver_params, random_state

    def _finalize(self, obj, M):
        self.autocorrelation_ = obj.autocorrelation(M)
        return M


class SFA(LinearDR):
    """Linear slow feature analysis: the slowest directions of the whitened series (survey §3.1).

    Minimizes tr(MᵀĊM), Ċ the covariance of the whitened finite differences; the features are
    ``y = (x − mean_) Σ^{-1/2} M``, with unit covariance.  **The rows of X are the time order.**

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (at
        n_features the slowness is the constant tr(Ċ)).
    reg : float in [0, 1], default 0
        Shrinkage of Σ before whitening (needed when Σ is singular).
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : (n_features, n_components) orthonormal, in whitened coordinates
    components_ : (n_components, n_features)
        The slow-feature filters ``(Σ^{-1/2} M_)ᵀ``: ``transform(X) == (X − mean_) @
        components_.T`` (not orthonormal: SFA whitens first).
    slowness_ : float
        ``tr(M_ᵀĊM_)``, the mean squared time derivative of the features (smaller is slower).
    n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = ldr.datasets.make_maf(300, 6, seed=0)
    >>> Y = SFA(n_components=2).fit_transform(X)
    >>> bool(np.allclose(np.cov(Y.T, bias=True), np.eye(2)))
    True
    """

    _objective_class = SFAObjective
    _objective_args = ("reg",)

    def __init__(self, n_components=None, reg=0.0, solver="trust-region", start="heuristic",
                 solver_params=None, random_state=None):
        self.n_components, self.reg, self.solver, self.start = n_components, reg, solver, start
        self.solver_params, self.random_state = solver_params, random_state

    def _finalize(self, obj, M):
        self.slowness_ = obj.slowness(M)
        return M

    def _components(self, obj, M):
        return obj.filters(M).T


class MDS(LinearDR):
    """Linear metric MDS: the orthogonal projection that best keeps the pairwise distances.

    Minimizes the Kruskal–Shepard stress Σ_ij (δ_ij − ‖Mᵀ(x_i − x_j)‖)² (survey Eq. 4),
    δ the ``metric`` distances of X, from the PCA subspace (classical scaling).  Each cost
    evaluation is O(n²): meant for thousands of samples, not millions.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (the whole
        space keeps every Euclidean distance: nothing to optimize).
    metric : str, default "euclidean"
        Any :func:`sklearn.metrics.pairwise_distances` metric for δ.
    eps : float, optional
        Smoothing of the projected distances (:class:`ldr.objectives.MDS`).
    block_size : int, optional
        Rows per block of the n×n accumulations.
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`
    stress_ : float
        Kruskal's stress-1 at ``M_`` (0 is a perfect fit; smaller is better).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((60, 4)) * [3.0, 2.0, 1.0, 0.5]
    >>> est = MDS(n_components=2).fit(X)
    >>> bool(est.stress_ <= est.objective_.stress(est.objective_.heuristic()))
    True
    """

    _pairwise_memory = True

    _objective_class = MDSObjective
    _objective_args = ("metric", "eps", "block_size")

    def __init__(self, n_components=None, metric="euclidean", eps=None, block_size=None,
                 solver="trust-region", start="heuristic", solver_params=None,
                 random_state=None):
        self.n_components, self.metric, self.eps = n_components, metric, eps
        self.block_size, self.solver, self.start = block_size, solver, start
        self.solver_params, self.random_state = solver_params, random_state

    def _finalize(self, obj, M):
        self.stress_ = obj.stress(M)
        return M


class _Graph(LinearDR):
    """LPP and NPE: the ratio of neighbour scatter to spread, smaller is better."""

    def _finalize(self, obj, M):
        self.ratio_ = obj.ratio(M)
        return M

    def _components(self, obj, M):
        return (obj.whitener_ @ M).T


class LPP(_Graph):
    """Locality preserving projections: keep neighbours close (He & Niyogi; survey Eq. 17–18).

    Minimizes tr(MᵀS_LM)/tr(MᵀS_DM) on a heat-kernel k-nearest-neighbour graph, from the
    eigenvector recipe (generalized eigenvectors of (S_L, S_D)), which it improves on.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (at
        n_features the ratio is the constant tr(S_L)/tr(S_D)).
    n_neighbors : int, optional
        k of the symmetrized k-nearest-neighbour graph (default 5 when ``radius`` is None).
    radius : float, optional
        An ε-ball graph instead (then leave ``n_neighbors`` None).
    tau : float, optional
        Heat-kernel width (default the median squared edge length).
    weight : {"heat", "binary"}
    reg : float in [0, 1], default 0
        Shrinkage of S_D (needed when n_samples <= n_features).
    form : {"ratio", "whitened"}
        Orthogonal projection, or the survey's whitened Eq. 19 (:class:`ldr.objectives.LPP`,
        :class:`ldr.objectives.NPE`).
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`
    components_ : (n_components, n_features)
        The linear map: ``transform(X) == (X − mean_) @ components_.T``; ``M_.T`` for
        ``form="ratio"``, ``(S_D^{-1/2} M_)ᵀ`` for ``form="whitened"``.
    ratio_ : float
        Neighbour scatter over spread at ``M_`` (positive, smaller is better).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((80, 5)) * [3.0, 1.0, 1.0, 1.0, 0.3]
    >>> est = LPP(n_components=2, n_neighbors=6).fit(X)
    >>> bool(est.ratio_ <= est.objective_.ratio(est.objective_.heuristic()))
    True
    """

    _objective_class = LPPObjective
    _objective_args = ("n_neighbors", "radius", "tau", "weight", "reg", "form")

    def __init__(self, n_components=None, n_neighbors=None, radius=None, tau=None, weight="heat",
                 reg=0.0, form="ratio", solver="trust-region", start="heuristic",
                 solver_params=None, random_state=None):
        self.n_components, self.n_neighbors, self.radius = n_components, n_neighbors, radius
        self.tau, self.weight, self.reg, self.form = tau, weight, reg, form
        self.solver, self.start = solver, start
        self.solver_params, self.random_state = solver_params, random_state


class NPE(_Graph):
    """Neighbourhood preserving embedding: keep LLE's reconstructions (He et al.; survey §3.1.8).

    Minimizes tr(MᵀS_LM)/tr(MᵀS_DM) with S_L the scatter of the barycentric reconstruction
    errors, from the eigenvector recipe, which it improves on.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, as :class:`LPP`.
    n_neighbors : int, optional
        Neighbours per reconstruction (default 5 when ``radius`` is None).
    radius : float, optional
        Reconstruct from an ε-ball instead.
    lle_reg : float > 0, default 1e-3
        Regularization of each local Gram matrix (as in LLE).
    reg : float in [0, 1], default 0
        Shrinkage of S_D (needed when n_samples <= n_features).
    form : {"ratio", "whitened"}
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, ratio_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        as in :class:`LPP`

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((80, 5)) * [3.0, 1.0, 1.0, 1.0, 0.3]
    >>> NPE(n_components=2, n_neighbors=8).fit_transform(X).shape
    (80, 2)
    """

    _objective_class = NPEObjective
    _objective_args = ("n_neighbors", "radius", "lle_reg", "reg", "form")

    def __init__(self, n_components=None, n_neighbors=None, radius=None, lle_reg=1e-3, reg=0.0,
                 form="ratio", solver="trust-region", start="heuristic", solver_params=None,
                 random_state=None):
        self.n_components, self.n_neighbors, self.radius = n_components, n_neighbors, radius
        self.lle_reg, self.reg, self.form = lle_reg, reg, form
        self.solver, self.start = solver, start
        self.solver_params, self.random_state = solver_params, random_state


class KernelSDR(LinearDR):
    """Kernel sufficient dimension reduction: the subspace that carries all about y (Eq. 14–16).

    Minimizes tr(K̄_Y (K̄_{XM} + nεI)⁻¹) (Fukumizu et al.) from the gKDR eigenvectors.  y may
    be real (a Gaussian kernel) or class labels.  Each evaluation is O(n³); X is used as
    given (standardize features of different units first, e.g. in a Pipeline).

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (the whole
        space trivially carries all about y).
    eps : float > 0, default 1e-3
        Regularization ε.
    sigma, sigma_y, sigma_full : float, optional
        Kernel widths on XM, on y and on X for the heuristic (defaults: median distances).
    y_type : {"auto", "continuous", "classes"}
        "auto": floating-point y is continuous, anything else class labels.
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 4))
    >>> y = np.sin(2 * (X[:, 0] + X[:, 1]) / np.sqrt(2)) + 0.05 * rng.standard_normal(80)
    >>> est = KernelSDR(n_components=1).fit(X, y)
    >>> bool(np.abs(est.components_[0, :2]).min() > 0.6)
    True
    """

    _pairwise_memory = True

    _objective_class = KernelSDRObjective
    _objective_args = ("eps", "sigma", "sigma_y", "sigma_full", "y_type")

    def __init__(self, n_components=None, eps=1e-3, sigma=None, sigma_y=None, sigma_full=None,
                 y_type="auto", solver="trust-region", start="heuristic", solver_params=None,
                 random_state=None):
        self.n_components, self.eps, self.sigma = n_components, eps, sigma
        self.sigma_y, self.sigma_full, self.y_type = sigma_y, sigma_full, y_type
        self.solver, self.start = solver, start
        self.solver_params, self.random_state = solver_params, random_state


class _LatentGaussian(LinearDR):
    """PPCA and FA: loadings W (not orthonormal), posterior-mean transform, likelihood score."""

    def _finalize(self, obj, M):
        # the likelihood is invariant to W → WR: keep the basis with orthogonal columns of
        # decreasing norm (W's right singular vectors), largest entry of each positive
        W = np.asarray(M[0] if isinstance(M, tuple) else M, dtype=float)
        _, _, Vt = np.linalg.svd(W, full_matrices=False)
        W = W @ Vt.T
        rows = np.argmax(np.abs(W), axis=0)
        signs = np.sign(W[rows, np.arange(W.shape[1])])
        W = W * np.where(signs == 0, 1.0, signs)
        M = (W, *M[1:]) if isinstance(M, tuple) else W
        self.noise_variance_ = obj.unpack(M)[1]
        self.log_likelihood_ = obj.log_likelihood(M)
        return M

    def _components(self, obj, M):
        return obj.unpack(M)[0].T

    def score_samples(self, X) -> np.ndarray:
        """Log-likelihood of each row of X under the fitted Gaussian ``N(mean_, WWᵀ + Ψ)``."""
        check_is_fitted(self, "M_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        C = self.objective_.covariance(self.M_)
        return scipy.stats.multivariate_normal(self.mean_, C, allow_singular=False).logpdf(
            X).reshape(-1)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the rows of X (scikit-learn's PCA/FactorAnalysis ``score``)."""
        return float(np.mean(self.score_samples(X)))


class PPCA(_LatentGaussian):
    """Probabilistic PCA by maximum likelihood, x ~ N(μ, WWᵀ + σ²I) (survey Eq. 22).

    The closed form (Tipping & Bishop) is the default start and already optimal, so the run
    certifies it; ``transform`` is the posterior mean E[z | x].

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the largest q that leaves a noise
        variance to estimate.
    noise_variance : float > 0, optional
        A fixed σ²; estimated when None (default).
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : the point: W, or (W, [[log σ²]]) when σ² is estimated
    components_ : (n_components, n_features)
        The loadings Wᵀ (not orthonormal; columns of W orthogonal, by decreasing norm).
    noise_variance_ : float
        σ².
    log_likelihood_ : float
        Mean log-likelihood per training sample (−cost_).
    n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import PCA as SkPCA
    >>> X = np.random.default_rng(0).standard_normal((200, 5)) * [5.0, 4.0, 1.0, 1.0, 1.0]
    >>> est = PPCA(n_components=2).fit(X)
    >>> bool(abs(est.score(X) - SkPCA(2).fit(X).score(X)) < 1e-3)
    True
    """

    _objective_class = PPCAObjective
    _objective_args = ("noise_variance",)

    def __init__(self, n_components=None, noise_variance=None, solver="trust-region",
                 start="heuristic", solver_params=None, random_state=None):
        self.n_components, self.noise_variance = n_components, noise_variance
        self.solver, self.start = solver, start
        self.solver_params, self.random_state = solver_params, random_state


class FactorAnalysis(_LatentGaussian):
    """Factor analysis by maximum likelihood, x ~ N(μ, WWᵀ + Ψ), Ψ diagonal (survey Eq. 23).

    Starts at PPCA's closed form (ψ_j = σ²), which FA contains, so the answer is never less
    likely; ``transform`` is the posterior mean E[z | x].

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (ldr's model
        needs q < n_features).
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : the point (W, log ψ)
    components_ : (n_components, n_features)
        The loadings Wᵀ, as scikit-learn's FactorAnalysis (columns of W orthogonal here).
    noise_variance_ : (n_features,)
        ψ, the per-feature noise variances.
    log_likelihood_ : float
        Mean log-likelihood per training sample (−cost_).
    n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 6)) * 2
    >>> X += rng.standard_normal((300, 6)) * [0.5, 1.0, 1.5, 0.5, 1.0, 2.0]
    >>> est = FactorAnalysis(n_components=2).fit(X)
    >>> bool(est.log_likelihood_ > PPCA(n_components=2).fit(X).log_likelihood_)
    True
    """

    _objective_class = FactorAnalysisObjective

    def __init__(self, n_components=None, solver="trust-region", start="heuristic",
                 solver_params=None, random_state=None):
        self.n_components, self.solver, self.start = n_components, solver, start
        self.solver_params, self.random_state = solver_params, random_state
