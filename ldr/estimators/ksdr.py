"""Kernel sufficient dimension reduction: the subspace that carries all the information
about y."""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import moments, take_rows
from ldr.data.validation import check_magnitude
from ldr.estimators.base import AffineMap, FitData, LinearDR, random_seed, sample_size
from ldr.objectives.ksdr import KernelSDR as KernelSDRObjective

__all__ = ["AUTO_ROWS", "KernelSDR", "auto_rows"]

#: ``rows="auto"`` fits every row up to this many samples and a seeded uniform sample of this
#: many rows beyond.  One evaluation of the cost is O(s³) time (a Cholesky factorization of
#: K̄ + sεI) and a few s×s float64 arrays of memory, whatever n is.
AUTO_ROWS = 4000


def auto_rows(n_samples: int) -> int | None:
    """The rows ``rows="auto"`` samples at ``n_samples`` rows: None (every row) up to
    ``AUTO_ROWS``, else ``AUTO_ROWS``."""
    return None if n_samples <= AUTO_ROWS else AUTO_ROWS


class KernelSDR(LinearDR):
    """Kernel sufficient dimension reduction: the subspace that carries all about y (Eq. 14–16).

    Minimizes tr(K̄_Y (K̄_{XM} + nεI)⁻¹) (Fukumizu et al.) from the gKDR eigenvectors.  y may
    be real (a Gaussian kernel) or class labels.  Each evaluation is a Cholesky
    factorization, O(n³) time, and O(n²) memory, so past ``AUTO_ROWS`` samples the cost is
    that of a seeded uniform sample of ``AUTO_ROWS`` rows (``rows="auto"``): the same
    estimator of the conditional covariance operator (Fukumizu et al. 2009) on s rows instead
    of n, its cost fixed in n; the ``approximation_`` says so.  X is used as given
    (standardize features of different units first, e.g. in a Pipeline).

    Under scikit-learn's ``array_api_dispatch`` a PyTorch tensor (on the CPU or a GPU), a
    CuPy or an array-api-strict array is fitted in its namespace and on its device: the
    sampled rows, the kernel, its Cholesky factorization and solves, the oracles and the
    solver stay there; the targets (read once, as scikit-learn does), d×d arrays, points and
    the seeded rows (at most 2000) the kernel widths' medians are read from reach the host.

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
    rows : "auto", int or None, default "auto"
        The rows the cost is computed on: an integer s, a uniform sample of s rows drawn from
        ``random_state``; None: every row; "auto": every row up to ``AUTO_ROWS`` samples,
        ``AUTO_ROWS`` sampled rows beyond (``auto_rows``).
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    eps : deprecated
        The former name of ``ridge``; warns, removed in the next release.

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR` (``mean_`` of every row; ``cost_`` on the rows fitted)
    rows_ : ndarray of int, shape (s,), or None
        The sampled rows' indices (sorted); None when the fit used every row.
    approximation_ : str or None
        None when the fit used every row; else a sentence naming the sample.

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
    _computes_in_namespace = True
    _objective_class = KernelSDRObjective
    _objective_args = ("sigma", "sigma_y", "sigma_full", "y_type")

    def __init__(self, n_components=None, *, ridge=1e-3, sigma=None, sigma_y=None,
                 sigma_full=None, y_type="auto", solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False, rows="auto", eps="deprecated"):
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
        self.rows = rows
        self.eps = eps

    def _prepare(self, data: FitData) -> None:
        """``ridge``; with sampled rows (``rows``), ``data.X`` and ``data.y`` become the
        sample's and ``data.mean`` every row's mean."""
        data.params["ridge"] = self._renamed("ridge", "eps")[0]
        n = data.X.shape[0]
        if data.lazy:     # a Dask array or memmap: n and the mean by one pass over its chunks
            stats = moments(data.X, name="X")
            n = int(stats.n)
            data.mean = np.asarray(arrays.to_host(stats.shift + stats.offset), dtype=float)
            self._check_targets(data.y, n)
        rows = sample_size(self.rows, "rows", n, auto_rows)
        self.rows_ = None
        self.approximation_ = None
        if rows is None or rows == n:
            if data.lazy:  # every row: at most AUTO_ROWS of them ("auto"), or asked for
                self._gather(data, np.arange(n))
            return
        rng = np.random.default_rng(random_seed(self.random_state))
        self.rows_ = np.sort(rng.choice(n, int(rows), replace=False))
        if not data.lazy:
            xp = arrays.namespace(data.X)
            data.mean = np.asarray(arrays.to_host(xp.mean(data.X, axis=0)), dtype=float)
        self._gather(data, self.rows_)
        why = (f'rows="auto" and n_samples > AUTO_ROWS = {AUTO_ROWS}'
               if isinstance(self.rows, str) else f"rows={rows}")
        self.approximation_ = (f"the cost on a uniform sample of {rows} of the {n} rows, "
                               f"seeded by random_state ({why})")

    def _reads_chunks(self) -> bool:
        """A Dask array or memmap stays out of memory when the cost is on sampled rows
        (``rows`` not None): the fit reads the mean by one pass over its chunks and gathers
        the sample's rows (every row up to ``AUTO_ROWS`` with "auto")."""
        return self.rows is not None

    @staticmethod
    def _gather(data: FitData, rows: np.ndarray) -> None:
        """``data.X`` and ``data.y`` become their rows ``rows``, in memory (float64 X; an
        array of another namespace stays there, in its float dtype)."""
        X = take_rows(data.X, rows)
        if arrays.foreign(X) is None:
            X = np.asarray(X, dtype=np.float64)
        check_magnitude(X, "X")
        data.X = X
        data.y = take_rows(data.y, rows, "y")
        data.lazy = False

    @staticmethod
    def _check_targets(y, n: int) -> None:
        """One target per row of a lazy X (ValueError naming y)."""
        if y is None:
            return
        length = y.shape[0] if hasattr(y, "shape") else len(y)
        if length != n:
            raise ParameterError("y", f"has {length} targets but X has {n} samples; they must "
                                 "match")

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        """``(X − mean_) @ M_``, mean_ every row's mean (the sample's objective centers its
        own rows)."""
        shift, A = obj.linear_map(M)
        if data.mean is not None:
            shift = data.mean
        return AffineMap(np.asarray(shift, dtype=float), A)
