"""Linear metric multidimensional scaling: the projection that best keeps pairwise distances."""

from __future__ import annotations

from ldr.estimators.base import FitData, LinearDR, random_seed
from ldr.objectives.mds import MDS as MDSObjective

__all__ = ["MDS"]


class MDS(LinearDR):
    """Linear metric MDS: the orthogonal projection that best keeps the pairwise distances.

    Minimizes the Kruskal–Shepard stress Σ_ij (δ_ij − ‖Mᵀ(x_i − x_j)‖)² (survey Eq. 4),
    δ the ``metric`` distances of X, from the PCA subspace (classical scaling).  Each cost
    evaluation is O(n²) time and O(n) memory beyond 4096 samples (δ recomputed per block of
    rows); ``landmarks=m`` makes it O(n·m), an approximation (:class:`ldr.objectives.MDS`).

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (the whole
        space keeps every Euclidean distance: nothing to optimize).
    metric : str, default "euclidean"
        Any :func:`sklearn.metrics.pairwise_distances` metric for δ.
    smoothing : float, optional
        Smoothing of the projected distances (the objective's ``eps``,
        :class:`ldr.objectives.MDS`).
    block_size : int, optional
        Rows per block of the n×n accumulations.
    landmarks : int, optional
        m: the stress over the pairs (sample, one of m landmark samples drawn from
        ``random_state``), scaled by n/m — for large n, where all n² pairs cost too much
        time (an approximation of the stress).  None (default): all pairs.
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    eps : deprecated
        The former name of ``smoothing``; warns, removed in the next release.

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
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
    _objective_args = ("metric", "block_size", "landmarks")

    def __init__(self, n_components=None, *, metric="euclidean", smoothing=None,
                 block_size=None, landmarks=None, solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False, eps="deprecated"):
        self.n_components = n_components
        self.metric = metric
        self.smoothing = smoothing
        self.block_size = block_size
        self.landmarks = landmarks
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
        data.params["smoothing"] = self._renamed("smoothing", "eps")[0]
        if self.landmarks is not None:
            data.params["random_state"] = random_seed(self.random_state)

    def _finish(self, data: FitData, obj, result):
        self.stress_ = obj.stress(result.M)
        return result.M
