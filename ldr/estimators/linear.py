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
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np
import scipy.stats
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ldr._validation import check_labels
from ldr.driver import solve
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
from ldr.rows import as_dask_array, is_lazy, map_rows, refuse_lazy

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


def check_n_components(n_components, n_features: int) -> int:
    """``n_components`` as an int with 1 <= n_components < n_features."""
    q = n_components
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q < n_features:
        raise ValueError(f"n_components: must be an integer with 1 <= n_components < "
                         f"n_features = {n_features}, got {q!r}")
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


class LinearDR(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Any ldr objective of the form ``cls(X, [y,] r, **params)`` as a transformer.

    Parameters
    ----------
    objective : Objective subclass or its name in :mod:`ldr.objectives`
        Supervised when its constructor reads ``cls(X, y, r, ...)``: ``fit`` then needs y.
    n_components : int, default 2
        r, the subspace dimension, 1 <= r < n_features.
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

    def __init__(self, objective, n_components=2, solver="trust-region", start="heuristic",
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
            return validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2,
                                 multi_output=True)
        return validate_data(self, X, dtype=np.float64, ensure_min_samples=2), None

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
        r = check_n_components(self.n_components, X.shape[1])
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
        return self

    def _finalize(self, obj: Objective, M):
        """Hook: the point to keep (a subclass may rotate a Grassmann answer); sets scores."""
        return M

    def _components(self, obj: Objective, M):
        """Hook: ``components_`` (r×d); ``M.T`` for a single factor, unset on a product."""
        return None if isinstance(M, tuple) else M.T

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    def transform(self, X) -> np.ndarray:
        """The objective's mapping of X onto the learned subspace (usually ``(X − mean_) M_``)."""
        check_is_fitted(self, "M_")
        if is_lazy(X):  # a lazy Dask array, block by block (map_blocks)
            return map_rows(X, self._transform_block, self.n_features_in_,
                            self.n_components_)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.asarray(self.objective_.transform(X, self.M_), dtype=float)

    def _transform_block(self, X):
        return self.objective_.transform(X, self.M_)


class PCA(LinearDR):
    """Principal component analysis by manifold optimization (survey Eq. 2).

    Minimizes −tr(MᵀCM) (:class:`ldr.objectives.PCA`).  The heuristic start is the exact
    answer, so the default run stops at iteration 0; other solvers and starts reach the same
    subspace.  The basis is then rotated to the principal axes within it (eigenvectors of
    MᵀCM, largest variance first) with scikit-learn's sign rule (the largest entry of each
    component is positive), so ``components_`` matches ``sklearn.decomposition.PCA`` up to
    rounding where the eigenvalues are distinct.

    Parameters
    ----------
    n_components : int, 1 <= n_components < n_features
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`
    explained_variance_ : (n_components,)
        Variance along each component (covariance divided by n − 1).
    explained_variance_ratio_ : (n_components,)
        Its share of the total variance.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((100, 4)) * [4.0, 3.0, 2.0, 1.0]
    >>> est = PCA(n_components=2).fit(X)
    >>> bool(np.all(np.abs(est.components_.argmax(axis=1) - [0, 1]) == 0))
    True
    >>> est.explained_variance_ratio_.round(2)
    array([0.54, 0.26])
    """

    _objective_class = PCAObjective

    def __init__(self, n_components=2, solver="trust-region", start="heuristic",
                 solver_params=None, random_state=None):
        self.n_components, self.solver, self.start = n_components, solver, start
        self.solver_params, self.random_state = solver_params, random_state

    def _finalize(self, obj, M):
        w, V = np.linalg.eigh(M.T @ obj.C @ M)
        M = M @ V[:, ::-1]
        rows = np.argmax(np.abs(M), axis=0)
        M = M * np.sign(M[rows, np.arange(M.shape[1])])
        self.explained_variance_ = w[::-1].copy()
        self.explained_variance_ratio_ = self.explained_variance_ / np.trace(obj.C)
        return M


class OrthogonalLDA(LinearDR):
    """Orthogonal LDA: maximize the quotient of traces tr(MᵀS_bM)/tr(MᵀS_wM) (survey Eq. 6).

    The classical answer (eigenvectors of S_w⁻¹S_b) solves the trace of quotient, not this
    cost; the default run starts there and the trust-region solver improves on it, so
    ``ratio_`` is never below the heuristic's ratio.

    Parameters
    ----------
    n_components : int, 1 <= n_components < min(n_features, n_classes)
    reg : float in [0, 1], default 0
        Shrinkage of S_w towards tr(S_w)/d · I (needed when S_w is singular).
    solver, start, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`
    ratio_ : float
        The trace ratio at ``M_`` on the training data (with the ``reg`` shrinkage).
    classes_ : array of the class labels

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> pipe = make_pipeline(StandardScaler(), OrthogonalLDA(2), KNeighborsClassifier())
    >>> bool(pipe.fit(X, y).score(X, y) > 0.95)
    True
    """

    _objective_class = LDA
    _objective_args = ("reg",)

    def __init__(self, n_components=2, reg=0.0, solver="trust-region", start="heuristic",
                 solver_params=None, random_state=None):
        self.n_components, self.reg, self.solver, self.start = n_components, reg, solver, start
        self.solver_params, self.random_state = solver_params, random_state

    def _finalize(self, obj, M):
        self.ratio_, self.classes_ = obj.ratio(M), obj.classes_
        return M

    def score(self, X, y) -> float:
        """The trace ratio tr(S_b)/tr(S_w) of the projected data ``transform(X)`` with labels
        ``y`` (no shrinkage): how well the learned subspace separates these classes."""
        Z = self.transform(X)
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, lag=1, reg=0.0, solver="trust-region",
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, reg=0.0, solver="trust-region", start="heuristic",
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, metric="euclidean", eps=None, block_size=None,
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, n_neighbors=None, radius=None, tau=None, weight="heat",
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, n_neighbors=None, radius=None, lle_reg=1e-3, reg=0.0,
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, eps=1e-3, sigma=None, sigma_y=None, sigma_full=None,
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, noise_variance=None, solver="trust-region",
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
    n_components : int, 1 <= n_components < n_features
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

    def __init__(self, n_components=2, solver="trust-region", start="heuristic",
                 solver_params=None, random_state=None):
        self.n_components, self.solver, self.start = n_components, solver, start
        self.solver_params, self.random_state = solver_params, random_state
