"""Linear metric multidimensional scaling: the projection that best keeps pairwise distances."""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data.rows import take_rows
from ldr.data.validation import check_data
from ldr.estimators.base import FitData, LinearDR, random_seed, sample_size
from ldr.objectives.mds import MDS as MDSObjective
from ldr.objectives.mds import STORE_MAX

__all__ = ["AUTO_LANDMARKS", "AUTO_ROWS", "EXACT_MAX_SAMPLES", "MDS", "auto_landmarks",
           "auto_rows"]

# benchmark: benchmarks/bench_mds_landmarks.py
#: ``landmarks="auto"`` fits the exact stress (all n² pairs) up to this many samples: while the
#: objective stores the n×n dissimilarities (``STORE_MAX``, 128 MiB); beyond, every evaluation
#: recomputes them by blocks of rows and an exact fit's time grows like n²
EXACT_MAX_SAMPLES = STORE_MAX
#: the landmarks ``landmarks="auto"`` takes past ``EXACT_MAX_SAMPLES`` samples: fixed,
#: since the landmark estimate's error depends on m (it samples m of the n columns of the
#: stress's double sum), not on n (the MDS class docstring gives the measured error)
AUTO_LANDMARKS = 1000
# benchmark: benchmarks/bench_mds_rows.py
#: with landmarks, ``rows="auto"`` sums the pairs of every row up to this many samples and of
#: a uniform sample of this many rows beyond: the estimate's error depends on the rows and
#: landmarks sampled, not on n, so past it the fit's time is constant in n.  8192 is the
#: largest size at which the landmark fit was measured against the exact fit over every
#: row's pairs
AUTO_ROWS = 2 * EXACT_MAX_SAMPLES


def auto_landmarks(n_samples: int) -> int | None:
    """The landmarks ``landmarks="auto"`` takes at ``n_samples`` rows: None (the exact stress)
    up to ``EXACT_MAX_SAMPLES``, else ``AUTO_LANDMARKS``."""
    return None if n_samples <= EXACT_MAX_SAMPLES else min(AUTO_LANDMARKS, n_samples)


def auto_rows(n_samples: int) -> int | None:
    """The rows ``rows="auto"`` samples (with landmarks) at ``n_samples`` rows: None (every
    row) up to ``AUTO_ROWS``, else ``AUTO_ROWS``."""
    return None if n_samples <= AUTO_ROWS else AUTO_ROWS


class MDS(LinearDR):
    """Linear metric MDS: the orthogonal projection that best keeps the pairwise distances.

    Minimizes the Kruskal–Shepard stress over orthonormal M (d × r, survey Eq. 4),

        f(M) = Σ_i Σ_j (δ_ij − ‖Mᵀ(x_i − x_j)‖)²,

    δ the ``metric`` distances of X, from the PCA subspace (classical scaling).  Each
    evaluation is O(n²) time; δ is stored up to 4096 samples and recomputed per block of rows
    beyond (O(n) memory).  With m landmark samples L (drawn uniformly from ``random_state``)
    the stress is estimated from the pairs (sample, landmark),

        f_L(M) = (n/m) Σ_i Σ_{ℓ∈L} (δ_iℓ − ‖Mᵀ(x_i − x_ℓ)‖)²,

    an unbiased estimate of f(M) in O(n·m) time per evaluation: an approximation, whose
    minimizer is not f's (:class:`ldr.objectives.MDS`).  With the rows R a uniform sample of
    s rows too,

        f_{R,L}(M) = (n/s)(n/m) Σ_{i∈R} Σ_{ℓ∈L} (δ_iℓ − ‖Mᵀ(x_i − x_ℓ)‖)²,

    the same unbiased estimate in O(s·m) time per evaluation, whatever n is.

    **The default switches to landmarks by itself.**  ``landmarks="auto"`` fits f exactly up
    to :data:`~ldr.estimators.mds.EXACT_MAX_SAMPLES` = 4096 samples, while δ is stored (past
    it, every evaluation recomputes δ and an exact fit's time grows like n²), and f_L with
    :data:`~ldr.estimators.mds.AUTO_LANDMARKS` = 1000 landmarks beyond.  m is fixed because the
    estimate's error depends on m, not on n: past the switch the fit's time and memory grow
    linearly in n and its error stays as measured; 1000 is the smallest of the measured
    candidates (250, 500, 1000) whose answer kept the exact stress-1 within 0.25% of the exact
    answer's on every landmark draw (up to twice the switch, on two tables).  Measured at the
    switch (n = 4096, d = 20, five draws, one core): the exact stress-1 at the landmark answer
    at most 0.07% above the exact answer's, the sine of the largest principal angle between
    the two subspaces at most 0.047, in about a quarter of the exact fit's time and a third of
    its memory beyond the data.  Past :data:`~ldr.estimators.mds.AUTO_ROWS` = 8192 samples
    the rows are a uniform sample of 8192 as well (``rows="auto"``), so the fit's time and
    memory stop growing with n; measured at 16 384 samples (two tables, three draws, one
    core), the exact stress-1 at its answer is within 0.13% of the answer over every row's
    pairs, in about half the time and memory.  A fit that used landmarks says so in
    ``approximation_``, ``landmarks_`` and ``rows_``.

    **Namespaces.**  Under scikit-learn's ``array_api_dispatch`` a PyTorch tensor (on the CPU
    or a GPU), a CuPy or an array-api-strict array is fitted in its namespace and on its
    device: the rows, landmarks, sampled rows and Euclidean dissimilarities, the stress's
    oracles and the solver stay there; only d×d arrays, the points and the rows the default
    smoothing is read from (at most 2000) reach the host (another ``metric`` than
    ``"euclidean"`` is computed by scikit-learn on the host, a block of rows at a time).  A
    Dask array or memmap is read over its chunks (the moments, then the sampled rows and the
    landmarks gathered).

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
    landmarks : "auto", int or None, default "auto"
        An integer m in [2, n_samples]: f_L over m landmark samples drawn from
        ``random_state`` (an approximation of the stress, O(n·m) per evaluation).  None: all
        pairs, f exactly.  "auto": exact up to ``EXACT_MAX_SAMPLES`` samples, else
        ``AUTO_LANDMARKS`` landmarks (``auto_landmarks``).
    rows : "auto", int or None, default "auto"
        With landmarks: an integer s in [2, n_samples] sums the pairs (row, landmark) of s
        rows drawn from ``random_state``, f_{R,L}; None: of every row; "auto": every row up to
        ``AUTO_ROWS`` samples, ``AUTO_ROWS`` rows beyond (``auto_rows``).  Without landmarks
        (the exact stress) only "auto" and None are accepted.
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    eps : deprecated
        The former name of ``smoothing``; warns, removed in the next release.

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR`
    stress_ : float
        Kruskal's stress-1 at ``M_`` (0 is a perfect fit; smaller is better), over the pairs
        the fit summed (with landmarks: the pairs (sample, landmark)).
    landmarks_ : ndarray of int, shape (m,), or None
        The landmarks' row indices (sorted) when the fit minimized f_L; None when it minimized
        f exactly.
    rows_ : ndarray of int, shape (s,), or None
        The sampled rows' indices (sorted) when the fit minimized f_{R,L}; None when it summed
        over every row.
    approximation_ : str or None
        None for the exact stress; with landmarks, a sentence saying that the fit minimized
        f_L (or f_{R,L}), with m, s and n, and why (``"auto"`` past its size, or the integer
        given).

    References
    ----------
    J. B. Kruskal (1964), "Multidimensional scaling by optimizing goodness of fit to a
    nonmetric hypothesis", Psychometrika 29, 1–27; V. de Silva, J. B. Tenenbaum (2004),
    "Sparse multidimensional scaling using landmark points", technical report, Stanford
    University (landmarks); J. P. Cunningham, Z. Ghahramani (2015), "Linear dimensionality
    reduction: survey, insights, and generalizations", JMLR 16, 2859–2900, Eq. 4.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((60, 4)) * [3.0, 2.0, 1.0, 0.5]
    >>> est = MDS(n_components=2).fit(X)
    >>> bool(est.stress_ <= est.objective_.stress(est.objective_.heuristic()))
    True
    """

    _pairwise_memory = True
    _computes_in_namespace = True
    _objective_class = MDSObjective
    _objective_args = ("metric", "block_size", "landmarks", "rows")

    def __init__(self, n_components=None, *, metric="euclidean", smoothing=None,
                 block_size=None, landmarks="auto", rows="auto", solver=None, start=None,
                 tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False, eps="deprecated"):
        self.n_components = n_components
        self.metric = metric
        self.smoothing = smoothing
        self.block_size = block_size
        self.landmarks = landmarks
        self.rows = rows
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
        landmarks = self.landmarks
        if not np.isfinite(data.X.shape[0]):
            raise ParameterError("X", "the Dask array's chunk sizes are unknown; build it with "
                                 "to_dask_array(lengths=True) or call compute_chunk_sizes()")
        n = int(data.X.shape[0])
        landmarks = sample_size(landmarks, "landmarks", n, auto_landmarks)
        data.params["landmarks"] = landmarks
        if landmarks is None and self.rows is not None and not isinstance(self.rows, str):
            raise ParameterError("rows", f"a row sample needs landmarks (it samples the pairs "
                                 f"(row, landmark)); the fit is exact, so rows must be "
                                 f"\"auto\" or None, got {self.rows!r}")
        rows = sample_size(self.rows, "rows", n,
                           lambda n: None if landmarks is None else auto_rows(n))
        data.params["rows"] = rows
        if landmarks is not None:
            data.params["random_state"] = random_seed(self.random_state)
        if data.lazy and (landmarks is None or rows is None):
            # "auto" at most AUTO_ROWS rows: small enough to read whole
            X = np.asarray(take_rows(data.X, np.arange(n)), dtype=np.float64)
            check_data(X, "X")
            data.X = X
            data.lazy = False

    def _reads_chunks(self) -> bool:
        """A Dask array or memmap stays out of memory with landmarks and sampled rows (both
        "auto" by default, or integers): the objective reads the mean and scatter by one pass
        over its chunks and gathers the sampled rows and the landmarks; with "auto" at most
        ``AUTO_ROWS`` rows, below the switches, are read whole."""
        auto = isinstance(self.landmarks, str) and isinstance(self.rows, str)
        return auto or (self.landmarks is not None and self.rows is not None)

    def _finish(self, data: FitData, obj, result):
        self.stress_ = obj.stress(result.M)
        self.landmarks_ = obj.landmarks_
        self.rows_ = obj.rows_
        self.approximation_ = None
        if obj.landmarks_ is not None:
            m = len(obj.landmarks_)
            n = obj.n_samples
            why = (f'landmarks="auto" and n_samples = {n} > EXACT_MAX_SAMPLES = '
                   f"{EXACT_MAX_SAMPLES}; the error this makes, measured at the switch, is "
                   "stated in the MDS class docstring" if isinstance(self.landmarks, str)
                   else f"landmarks={m}")
            if obj.rows_ is None:
                self.approximation_ = (f"landmarks: the stress over the pairs (sample, "
                                       f"landmark) of {m} landmarks of {n} samples, scaled by "
                                       f"n/m, an approximation of the exact stress ({why})")
            else:
                s = len(obj.rows_)
                why_rows = (f'rows="auto" and n_samples > AUTO_ROWS = {AUTO_ROWS}'
                            if isinstance(self.rows, str) else f"rows={s}")
                self.approximation_ = (f"landmarks: the stress over the pairs (sample, "
                                       f"landmark) of {s} sampled rows and {m} landmarks of {n} "
                                       f"samples, scaled by (n/s)(n/m), an approximation of "
                                       f"the exact stress ({why}; {why_rows})")
        return result.M
