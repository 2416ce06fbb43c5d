"""Linear metric multidimensional scaling: the projection that best keeps pairwise distances."""

from __future__ import annotations

from ldr.estimators._base import LinearDR
from ldr.objectives.mds import MDS as MDSObjective

__all__ = ["MDS"]


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
    solver, start, tol, max_iter, solver_params, random_state : see :class:`LinearDR`

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

    def __init__(self, n_components=None, *, metric="euclidean", eps=None, block_size=None,
                 solver=None, start=None, tol=1e-8, max_iter=1000,
                 solver_params=None, random_state=0):
        self.n_components, self.metric, self.eps = n_components, metric, eps
        self.block_size, self.solver, self.start = block_size, solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    def _finalize(self, obj, M, data):
        self.stress_ = obj.stress(M)
        return M
