"""Kernel sufficient dimension reduction: the subspace that carries all the information
about y."""

from __future__ import annotations

from ldr.estimators.base import FitData, LinearDR
from ldr.objectives.ksdr import KernelSDR as KernelSDRObjective

__all__ = ["KernelSDR"]


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
    ridge : float > 0, default 1e-3
        The regularization ε of Fukumizu et al.'s Eq. 15: nε is added to K̄_{XM} before its
        inverse (the objective's ``eps``).
    sigma, sigma_y, sigma_full : float, optional
        Kernel widths on XM, on y and on X for the heuristic (defaults: median distances).
    y_type : {"auto", "continuous", "classes"}
        "auto": real-valued y (floats not all integer-valued) is continuous, anything else —
        integer-valued floats included, as tables often store class codes — class
        labels (scikit-learn's ``type_of_target``).
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    eps : deprecated
        The former name of ``ridge``; warns, removed in the next release.

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
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
    _objective_args = ("sigma", "sigma_y", "sigma_full", "y_type")

    def __init__(self, n_components=None, *, ridge=1e-3, sigma=None, sigma_y=None,
                 sigma_full=None, y_type="auto", solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False, eps="deprecated"):
        self.n_components = n_components
        self.ridge = ridge
        self.sigma = sigma
        self.sigma_y = sigma_y
        self.sigma_full = sigma_full
        self.y_type = y_type
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.eps = eps

    def _prepare(self, data: FitData) -> None:
        data.params["ridge"] = self._renamed("ridge", "eps")[0]
