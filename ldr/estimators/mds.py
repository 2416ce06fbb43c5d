"""Linear metric multidimensional scaling: the projection that best keeps pairwise distances."""

from __future__ import annotations

from ldr.estimators._base import LinearDR
from ldr.estimators._solving import seed_of
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
    eps : float, optional
        Smoothing of the projected distances (:class:`ldr.objectives.MDS`).
    block_size : int, optional
        Rows per block of the n×n accumulations.
    landmarks : int, optional
        m: the stress over the pairs (sample, one of m landmark samples drawn from
        ``random_state``), scaled by n/m — for n ≳ 10⁴, where all n² pairs cost too much
        time (an approximation; its gap to the exact stress: the README's scale table).
        None (default): all pairs.
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
    _objective_args = ("metric", "eps", "block_size", "landmarks")

    def __init__(self, n_components=None, *, metric="euclidean", eps=None, block_size=None,
                 landmarks=None, solver=None, start=None, tol=1e-8, max_iter=1000,
                 solver_params=None, random_state=0):
        self.n_components, self.metric, self.eps = n_components, metric, eps
        self.block_size, self.landmarks = block_size, landmarks
        self.solver, self.start = solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    def _objective_spec(self):
        cls, kwargs = super()._objective_spec()
        if cls is MDSObjective and self.landmarks is not None:
            kwargs["random_state"] = seed_of(self.random_state)
        return cls, kwargs

    def _finalize(self, obj, M, data):
        self.stress_ = obj.stress(M)
        return M

    def _linear_map(self):
        """``(μ, A)`` with ``transform(X) == (X − μ) @ A``: computed in X's namespace under
        ``array_api_dispatch`` (:func:`ldr.estimators._namespace.transform_in`)."""
        return self.mean_, self.components_.T
