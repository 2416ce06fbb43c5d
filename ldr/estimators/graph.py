"""Graph embeddings as projections: locality preserving projections and neighbourhood
preserving embedding."""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.validation import span_basis
from ldr.estimators.base import FitData, LinearDR, random_seed, sign_rule
from ldr.estimators.span import reduce_rows
from ldr.objectives.graph import LPP as LPPObjective
from ldr.objectives.graph import NPE as NPEObjective
from ldr.objectives.graph import lpp_scatters

__all__ = ["LPP", "NPE"]

#: a row whose graph degree is at most this share of the largest is absent from S_D to
#: rounding (its heat weights underflow)
FAR_DEGREE = 1e-14


class GraphEmbedding(LinearDR):
    """LPP and NPE: the ratio of neighbour scatter to spread, smaller is better; with no
    shrinkage and a singular S_D the fit works in the span of the rows (``subspace_``:
    distances, hence the graph, are unchanged)."""

    _pairwise_memory = False  # a sparse k-nearest-neighbour graph, no n×n array
    #: rows of another namespace: the neighbour search, the graph's sums and the quotient's
    #: solver run there, on their device (only d×d checks and the sign rule on the host)
    _computes_in_namespace = True

    def _reads_chunks(self) -> bool:
        """A Dask array or memmap is read a chunk at a time for a k-nearest-neighbour graph
        (each row's neighbours searched in its chunk, :mod:`ldr.objectives.graph`); an ε-ball
        graph needs the rows in memory."""
        return self.radius is None

    def _prepare(self, data: FitData) -> None:
        data.params["shrinkage"] = self._shrinkage()
        data.params["random_state"] = random_seed(self.random_state)
        self.subspace_ = reduce_rows(data, data.params["shrinkage"], None, rows=True)

    def _finish(self, data: FitData, obj, result):
        """The ratio, the graph's search and scikit-learn's sign rule on ``M_`` (on the
        original features; the fit may run on another device, whose rounding may flip a
        column)."""
        self.ratio_ = obj.ratio(result.M)
        search = obj.search_
        self.graph_recall_ = None if search is None else search.recall
        self.approximation_ = None if search is None else search.describe(data.X.shape[0])
        M = np.asarray(arrays.to_host(result.M), dtype=float)
        U = data.basis
        return sign_rule(M) if U is None else U.T @ sign_rule(U @ M)

    def _components(self, data: FitData, obj, M):
        A = np.asarray(arrays.to_host(obj.whitener_ @ arrays.as_point(M, obj.whitener_)),
                       dtype=float)
        return (A if data.basis is None else data.basis @ A).T


class LPP(GraphEmbedding):
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
    shrinkage : float in [0, 1], default 0
        Shrinkage of S_D, S_D ← (1 − s) S_D + s tr(S_D)/d I.  With 0 and a singular S_D
        (constant or collinear features, or n_samples <= n_features) the fit works in the
        span of the rows (``subspace_``).
    form : {"ratio", "whitened"}
        Orthogonal projection, or the survey's whitened Eq. 19 (:class:`ldr.objectives.LPP`,
        :class:`ldr.objectives.NPE`).
    neighbors : {"auto", "exact", "approximate"}, default "auto"
        The k-nearest-neighbour search.  "auto" is exact up to
        :data:`~ldr.objectives.neighbors.EXACT_MAX_SAMPLES` = 100 000 samples and approximate
        beyond, where the exact search's O(n²) time passes NN-descent's; "approximate" is
        NN-descent (pynndescent), whose recall against exact search is measured on a sample of
        rows and reported in ``graph_recall_`` (:mod:`ldr.objectives.neighbors`).  Measured
        past the switch (2·10⁵ rows, d = 50, one core): recall 0.97, the ratio at the answer
        within 0.003% of the exact graph's answer, three to eight times faster.  A Dask array or
        memmap is read a chunk at a time, its chunks' tasks on the workers: each row's
        neighbours are searched among its chunk's rows (by this rule at the chunk's size), the
        recall against the exact graph over all rows is measured in the same pass, and each
        chunk's heat width is its own graph's median squared edge length
        (:mod:`ldr.objectives.graph`); "exact" is refused there (pass the rows in memory), and
        so is an ε-ball graph.  Rows of another array namespace (a PyTorch tensor under
        scikit-learn's ``array_api_dispatch``) are searched exactly on their device at any n
        (brute force in strips of rows, :func:`ldr.objectives.neighbors.strip_search`), and
        the graph's sums computed there; "approximate" is refused for them.
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`
    components_ : (n_components, n_features)
        The linear map: ``transform(X) == (X − mean_) @ components_.T``; ``M_.T`` for
        ``form="ratio"``, ``(S_D^{-1/2} M_)ᵀ`` for ``form="whitened"``.
    ratio_ : float
        Neighbour scatter over spread at ``M_`` (positive, smaller is better).
    subspace_ : (n_features, k) or None
        The span of the centered rows (of the rows kept) when S_D is singular and shrinkage = 0
        (the fit ran on ``X @ subspace_``; ``M_ = subspace_ @`` its point); None otherwise.
    far_rows_ : array of int
        Rows set aside because their heat weights underflow (empty unless S_D was singular
        with shrinkage = 0 because of them; ``transform`` maps them like any row).  NumPy
        rows only: rows of another namespace with such an S_D get the objective's error,
        which says how to regularize.
    graph_recall_ : float or None
        For an approximate k-nearest-neighbour graph (NN-descent, or rows read a chunk at a
        time), the share of the exact k nearest neighbours over all rows it holds, measured on
        256 rows drawn from ``random_state``; None for exact search (and for an ε-ball graph).
    approximation_ : str or None
        None for an exact graph; else a sentence naming the approximate graph and its recall.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((80, 5)) * [3.0, 1.0, 1.0, 1.0, 0.3]
    >>> est = LPP(n_components=2, n_neighbors=6).fit(X)
    >>> bool(est.ratio_ <= est.objective_.ratio(est.objective_.heuristic()))
    True
    """

    _objective_class = LPPObjective
    _objective_args = ("n_neighbors", "radius", "tau", "weight", "form", "neighbors")

    def __init__(self, n_components=None, *, n_neighbors=None, radius=None, tau=None,
                 weight="heat", shrinkage=0.0, form="ratio", neighbors="auto", solver=None,
                 start=None, tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False, reg="deprecated"):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.tau = tau
        self.weight = weight
        self.shrinkage = shrinkage
        self.form = form
        self.neighbors = neighbors
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.reg = reg

    def _objective(self, data: FitData, r: int):
        scatters = data.derived.get("scatters")
        if scatters is None:
            return super()._objective(data, r)
        try:
            return LPPObjective.from_scatters(scatters, r, data.params["shrinkage"], self.form)
        except ParameterError as exc:
            if exc.param == "r":
                raise exc.renamed("n_components") from None
            raise

    def _prepare(self, data: FitData) -> None:
        """The span of the rows; then, with no shrinkage and S_D still singular, the rows
        whose heat weights underflow are set aside (``far_rows_``): a row far from all its
        neighbours is absent from S_L and S_D already, and so are the directions only it
        spans, which make S_D singular (:func:`ldr.objectives.graph.lpp_scatters`).  The fit
        on the other rows, with the heat-kernel width τ of all of them, has the same S_L and
        S_D to rounding."""
        super()._prepare(data)
        self.far_rows_ = np.zeros(0, dtype=int)
        if data.lazy or data.space is not None or data.params["shrinkage"] != 0 \
                or self.weight not in ("heat", "binary"):
            return  # the objective checks the parameters, with its messages
        X = np.asarray(data.X, dtype=float)
        try:
            scatters = lpp_scatters(X, self.n_neighbors, self.radius, self.tau, self.weight,
                                    self.neighbors, data.params["random_state"])
        except ValueError:  # bad graph parameters: the objective says which, with its message
            return
        S_D = scatters.S_D
        W = scatters.W
        tau = scatters.tau
        if span_basis(S_D) is None:
            data.derived["scatters"] = scatters  # the graph is built once
            return
        deg = np.asarray(W.sum(axis=1)).ravel()
        far = deg <= FAR_DEGREE * deg.max()
        if not far.any() or far.sum() > X.shape[0] - 3:
            return  # not that: the objective's own error says what is singular
        self.far_rows_ = np.flatnonzero(far)
        basis = data.basis
        mean = data.mean
        data.X = X[~far]
        data.basis = None
        U = reduce_rows(data, data.params["shrinkage"], None,
                        rows=True)  # the span of the rows kept
        if U is not None:
            basis = U if basis is None else basis @ U
            mean = data.mean if mean is None else mean
        data.basis = basis
        data.mean = mean
        self.subspace_ = basis
        if tau is not None:
            data.params["tau"] = tau


class NPE(GraphEmbedding):
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
    shrinkage : float in [0, 1], default 0
        Shrinkage of S_D, S_D ← (1 − s) S_D + s tr(S_D)/d I.  With 0 and a singular S_D
        (constant or collinear features, or n_samples <= n_features) the fit works in the
        span of the rows (``subspace_``).
    form : {"ratio", "whitened"}
    neighbors : {"auto", "exact", "approximate"}, default "auto"
        The k-nearest-neighbour search, as in :class:`LPP` (a Dask array or memmap too: each
        row reconstructed from its nearest rows in its chunk).
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_, components_, ratio_, subspace_, graph_recall_, approximation_, n_components_, cost_,
    n_iter_, result_, objective_, mean_ : as in :class:`LPP`

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((80, 5)) * [3.0, 1.0, 1.0, 1.0, 0.3]
    >>> NPE(n_components=2, n_neighbors=8).fit_transform(X).shape
    (80, 2)
    """

    _objective_class = NPEObjective
    _objective_args = ("n_neighbors", "radius", "lle_reg", "form", "neighbors")

    def __init__(self, n_components=None, *, n_neighbors=None, radius=None, lle_reg=1e-3,
                 shrinkage=0.0, form="ratio", neighbors="auto", solver=None, start=None,
                 tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False, reg="deprecated"):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.lle_reg = lle_reg
        self.shrinkage = shrinkage
        self.form = form
        self.neighbors = neighbors
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.reg = reg
