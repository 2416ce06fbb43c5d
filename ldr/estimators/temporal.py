"""Time-series methods: maximum autocorrelation factors and slow feature analysis.

**The rows of X are the time order** (equally spaced samples).
"""

from __future__ import annotations

import numbers

import numpy as np

from ldr.data.arrays import to_host
from ldr.estimators._base import LinearDR
from ldr.estimators._moments_namespace import SecondOrderNamespace
from ldr.estimators._namespace import fitted_numpy
from ldr.estimators._span import reduce_rows
from ldr.objectives.maf import MAF as MAFObjective
from ldr.objectives.maf import check_lag
from ldr.objectives.sfa import SFA as SFAObjective

__all__ = ["MAF", "SFA"]


def _subspace_map(est):
    """``(mean_, components_.T)`` of a fit in the span (``subspace_``), as NumPy float64."""
    return (np.asarray(fitted_numpy(est, "mean_"), dtype=float),
            np.asarray(fitted_numpy(est, "components_"), dtype=float).T)


class MAF(SecondOrderNamespace, LinearDR):
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
        Shrinkage of Σ towards tr(Σ)/d · I.  With 0 and a singular Σ (constant or collinear
        features, fewer samples than features) the fit works in the span of the series
        (``subspace_``): the directions dropped carry no variance, and the ratio is bounded
        on the others.
    solver, start, tol, max_iter, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`
    subspace_ : (n_features, k) or None
        The span of the centered rows (k = the rank of Σ) when Σ is singular and reg = 0:
        the fit ran on the coordinates ``X @ subspace_`` (``objective_`` is that fit's, and
        ``M_ = subspace_ @`` its point); None when Σ is non-singular (or reg > 0).
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
    _objective_args = ("lag", "reg")

    def __init__(self, n_components=None, *, lag=1, reg=0.0, solver=None,
                 start=None, tol=1e-8, max_iter=1000,
                 solver_params=None, random_state=0):
        self.n_components, self.lag, self.reg = n_components, lag, reg
        self.solver, self.start = solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    def _moment_options(self):
        lag = self.lag
        if isinstance(lag, bool) or not isinstance(lag, numbers.Integral):
            check_lag(lag, 3)  # the objective's message, before any pass over the rows
        return {"lag": max(int(lag), 1)}

    def _reduce(self, data):
        self.subspace_ = reduce_rows(data, self.reg, self._moment_options())

    def _linear_map(self):
        if self.subspace_ is not None:
            return _subspace_map(self)
        return self.objective_.mean_, to_host(self.M_)

    def _finalize(self, obj, M, data):
        self.autocorrelation_ = obj.autocorrelation(M)
        return M


class SFA(SecondOrderNamespace, LinearDR):
    """Linear slow feature analysis: the slowest directions of the whitened series (survey §3.1).

    Minimizes tr(MᵀĊM), Ċ the covariance of the whitened finite differences; the features are
    ``y = (x − mean_) Σ^{-1/2} M``, with unit covariance.  **The rows of X are the time order.**

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (at
        n_features the slowness is the constant tr(Ċ)).
    reg : float in [0, 1], default 0
        Shrinkage of Σ before whitening.  With 0 and a singular Σ the fit works in the span
        of the series (``subspace_``, as in :class:`MAF`): whitening is defined there, and
        the directions dropped carry no variance (they would be "infinitely slow").
    solver, start, tol, max_iter, solver_params, random_state : see :class:`LinearDR`

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

    def __init__(self, n_components=None, *, reg=0.0, solver=None, start=None,
                 tol=1e-8, max_iter=1000,
                 solver_params=None, random_state=0):
        self.n_components, self.reg, self.solver, self.start = n_components, reg, solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    def _moment_options(self):
        return {"lag": 1, "diff": True}

    def _reduce(self, data):
        self.subspace_ = reduce_rows(data, self.reg, self._moment_options())

    def _linear_map(self):
        if self.subspace_ is not None:
            return _subspace_map(self)
        return self.objective_.mean_, self.objective_.filters(to_host(self.M_))

    def _finalize(self, obj, M, data):
        self.slowness_ = obj.slowness(M)
        return M

    def _components(self, obj, M):
        return obj.filters(M).T
