"""Time-series methods: maximum autocorrelation factors and slow feature analysis.

**The rows of X are the time order** (equally spaced samples).
"""

from __future__ import annotations

import numbers

from ldr.core.errors import ParameterError
from ldr.data.rows import moments
from ldr.estimators.base import FitData, LinearDR, WeightedFit
from ldr.estimators.span import reduce_rows
from ldr.objectives.maf import MAF as MAFObjective
from ldr.objectives.maf import check_lag
from ldr.objectives.sfa import SFA as SFAObjective

__all__ = ["MAF", "SFA"]


class SecondOrderSeries(WeightedFit, LinearDR):
    """What MAF and SFA share: one pass over the series (in its namespace, or over the chunks
    of a Dask array or memmap) gives the covariance and the lagged or difference products;
    with no shrinkage and a singular covariance the fit works in the span of the series
    (``subspace_``, :mod:`ldr.estimators.span`).

    ``fit(X, sample_weight=w)`` holds sample i for w_i time steps: the covariance is the
    weighted one, and the lagged and difference products are those of the held series
    (:func:`~ldr.data.statistics.held_pairs`), so that an integer weight w counts as w copies
    of the sample in place (consecutive repeats add zero differences)."""

    _computes_in_namespace = True

    def _moment_options(self) -> dict:
        """Hook: the options of :func:`ldr.data.rows.moments` the objective reads."""
        raise NotImplementedError

    def _prepare(self, data: FitData) -> None:
        data.params["shrinkage"] = self._shrinkage()
        options = self._moment_options()
        if data.weights is not None:
            options["weights"] = data.weights
        self.subspace_ = reduce_rows(data, data.params["shrinkage"], options, stats=data.stats)

    def _batch_moments(self, data: FitData):
        """The batch's moments with the lagged (or difference) products; consecutive
        batches are consecutive stretches of the series (the pairs across a boundary are
        counted when they merge)."""
        return moments(data.X, name="X", validated=True, **self._moment_options()).on_host()

    def _objective(self, data: FitData, r: int):
        cls = self._objective_spec()[0]
        try:
            return cls(data.X, r, **data.params)
        except ParameterError as exc:
            if exc.param == "r":
                raise exc.renamed("n_components") from None
            raise


class MAF(SecondOrderSeries):
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
    shrinkage : float in [0, 1], default 0
        Shrinkage of Σ towards tr(Σ)/d · I, Σ ← (1 − s) Σ + s tr(Σ)/d I.  With 0 and a
        singular Σ (constant or collinear features, fewer samples than features) the fit
        works in the span of the series (``subspace_``): the directions dropped carry no
        variance, and the ratio is bounded on the others.
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`
    subspace_ : (n_features, k) or None
        The span of the centered rows (k = the rank of Σ) when Σ is singular and shrinkage = 0:
        the fit ran on the coordinates ``X @ subspace_`` (``objective_`` is that fit's, and
        ``M_ = subspace_ @`` its point); None when Σ is non-singular (or shrinkage > 0).
    autocorrelation_ : float
        tr(MᵀΣ_δM)/tr(MᵀΣM) at ``M_`` on the training series: the variance-weighted mean of
        the lag-δ sample autocorrelations of the components (each lagged sum divided by n,
        as statsmodels' ``acf``), so it lies in [−1, 1].

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

    def __init__(self, n_components=None, *, lag=1, shrinkage=0.0, solver=None, start=None,
                 tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False,
                 reg="deprecated"):
        self.n_components = n_components
        self.lag = lag
        self.shrinkage = shrinkage
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.reg = reg

    def _moment_options(self):
        lag = self.lag
        if isinstance(lag, bool) or not isinstance(lag, numbers.Integral):
            check_lag(lag, 3)  # the objective's message, before any pass over the rows
        return {"lag": max(int(lag), 1)}

    def _prepare(self, data: FitData) -> None:
        super()._prepare(data)
        data.params["lag"] = self.lag

    def _finish(self, data: FitData, obj, result):
        self.autocorrelation_ = obj.autocorrelation(result.M)
        return result.M


class SFA(SecondOrderSeries):
    """Linear slow feature analysis: the slowest directions of the whitened series (survey §3.1).

    Minimizes tr(MᵀĊM), Ċ the covariance of the whitened finite differences; the features are
    ``y = (x − mean_) Σ^{-1/2} M``, with unit covariance.  **The rows of X are the time order.**

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (at
        n_features the slowness is the constant tr(Ċ)).
    shrinkage : float in [0, 1], default 0
        Shrinkage of Σ before whitening.  With 0 and a singular Σ the fit works in the span
        of the series (``subspace_``, as in :class:`MAF`): whitening is defined there, and
        the directions dropped carry no variance (they would be "infinitely slow").
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_ : (n_features, n_components) orthonormal, in whitened coordinates
    components_ : (n_components, n_features)
        The slow-feature filters ``(Σ^{-1/2} M_)ᵀ``: ``transform(X) == (X − mean_) @
        components_.T`` (not orthonormal: SFA whitens first).
    slowness_ : float
        ``tr(M_ᵀĊM_)``, the mean squared time derivative of the features (smaller is slower).
    subspace_ : (n_features, k) or None
        As in :class:`MAF`; then ``M_`` is in the whitened coordinates of the span, mapped
        back by ``subspace_`` (``components_`` stays the filters in the original features).
    map_, n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = ldr.datasets.make_maf(300, 6, seed=0)
    >>> Y = SFA(n_components=2).fit_transform(X)
    >>> bool(np.allclose(np.cov(Y.T, bias=True), np.eye(2)))
    True
    """

    _objective_class = SFAObjective

    def __init__(self, n_components=None, *, shrinkage=0.0, solver=None, start=None,
                 tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False,
                 reg="deprecated"):
        self.n_components = n_components
        self.shrinkage = shrinkage
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.reg = reg

    def _moment_options(self):
        return {"lag": 1, "diff": True}

    def _finish(self, data: FitData, obj, result):
        self.slowness_ = obj.slowness(result.M)
        return result.M

    def _components(self, data: FitData, obj, M):
        filters = obj.filters(M)
        return (filters if data.basis is None else data.basis @ filters).T
