"""HSIC-based interpretable kernel dimension reduction in its four paradigms (ISM papers).

Every estimator standardizes X per feature, then minimizes −tr(Γ K_XW) over W on
Grassmann(d, q) — the **W-step**, with any solver (ISM by default, see
:class:`ldr.objectives.HSIC`) — once (:class:`SupervisedHSIC`) or, for the clustering
paradigms, alternately with a **U-step**, the spectral embedding of the projected data
(:mod:`ldr.estimators.hsic_alternation`).  Γ is built as a low-rank factor ``(F, s)``,
Γ = F diag(s) Fᵀ, divided by n² (the empirical HSIC's scale):

============================  ===========================================================
paradigm                      Γ
============================  ===========================================================
supervised                    H K_Y H,  K_Y = YYᵀ (one-hot labels) or a kernel on continuous y
unsupervised (Niu et al.)     H UUᵀ H,  U the spectral embedding of K_XW
semi-supervised (Chang)       D^{-1/2}UUᵀD^{-1/2} + μ H K_Ŷ H,  Ŷ expert scores
alternative (KDAC)            D^{-1/2}H(UUᵀ − λYYᵀ)HD^{-1/2},  Y the existing clustering
============================  ===========================================================

with H = I − 11ᵀ/n and D = diag(K_XW 1) (ISM Eqs. 1–5).  The U-step takes the top-k
eigenvectors of D^{-1/2}K_XW D^{-1/2} (H D^{-1/2}K_XW D^{-1/2} H for KDAC, its Eq. 3) and
labels are k-means on the row-normalized U.  ``n_components="auto"`` picks q at the largest
eigengap of Φ (ISM+ Eq. 50), first of Φ₀, then of Φ at the solution; None (the default) is
the natural maximum q = n_features − 1 (at q = n_features, K_XW is the kernel of the whole
space and there is nothing left to choose).

The fitted map is ``transform(X) = ((X − mean_) / scale_) @ M_``, the base's
``(X − map_.shift) @ map_.matrix`` with ``map_.matrix = M_ / scale_[:, None]``.  float32 X
gives float32 ``transform`` output and fitted arrays; the W-step and the U-step run in
float64.

**Array namespaces.**  Under ``sklearn.config_context(array_api_dispatch=True)`` an input of
another namespace than NumPy (a PyTorch tensor, a CuPy or array-api-strict array) gives the
fitted arrays — ``M_``, ``components_``, ``mean_``, ``scale_``, numeric ``classes_`` and the
clusterers' ``U_`` and ``labels_`` — and ``transform`` in that namespace and on that device.
The fit runs there: the standardization's mean and scale are computed on the device (d numbers
reach the host), the Gaussian's σ from a seeded sample of at most ``MEDIAN_MAX_SAMPLES`` rows
(the only rows read on the host), Γ's factor from y on the host (class labels) or from the
embedding on the device, and :class:`ldr.objectives.HSIC` computes its block sums, Φ₀ and
Hessian-vector products there for every built-in kernel and conic combination of them
(:meth:`ldr.kernels.Kernel.derivatives`) while :func:`ldr.solve` iterates; with an
``approximation`` (the default past ``EXACT_MAX_SAMPLES`` rows, as for NumPy)
:class:`ldr.objectives.hsic.ApproximateHSIC` computes its features and passes there, only their
m×m eigendecomposition and the m′×k×d sums on the host.  The clustering estimators' exact U-step
forms K_XW and takes its eigenvectors with that library's ``eigh`` (ARPACK's Lanczos, NumPy's
route above a few hundred rows, is NumPy code; so is the kept kernel's Φ of the inexact rounds,
which there takes a pass over the rows); their Nyström U-step (``spectral="nystroem"``, or
"auto" above ``DENSE_MAX`` rows) seeds its landmarks on the device with scikit-learn's draws
(:func:`ldr.estimators.kmeans.plusplus`), runs its passes over blocks of rows there and only
its m×m and ρ×ρ eigendecompositions on the host; ``labels_`` come from the array API k-means
(:mod:`ldr.estimators.kmeans`), which draws scikit-learn's seeds.  What has no namespace code —
a :class:`~ldr.kernels.Custom` kernel (autograd's f), ``backend="dask"`` — runs in NumPy on a
host copy of the standardized rows.  The answers are subspaces found from eigenvectors (ISM's Φ₀
and steps, the U-step), whose signs NumPy's and another library's ``eigh`` may choose
differently: ``M_`` and ``U_`` span NumPy's subspaces (to the solvers' tolerances), their
columns possibly flipped; ``labels_`` are NumPy's.

**Rows out of memory.**  A Dask array (or DataFrame) or ``np.memmap`` X is read from its
chunks when the kernel is the approximate Gaussian (``approximation`` "auto", which is then
Nyström at any n, "nystroem" or "rff") and, for the clustering estimators, the U-step is
Nyström's (``spectral`` "auto" or "nystroem"): one pass over the chunks gives ``mean_`` and
``scale_``; σ is the median distance of the same seeded sample of standardized rows as in
memory; only that sample and the landmark rows (the W-step's seeded draw, the U-step's
seeded pool) are gathered; and every Φ, Φ₀ and Nyström U-step maps the chunks' standardized
rows to d×d, m×m or n×k sums (:class:`~ldr.objectives.chunked_rows.ChunkedRows`; on a
``dask.distributed`` client's workers).  The answer is the in-memory fit's with the same
approximation, to rounding.  The client holds what has n rows: y, and for the clustering
estimators the embedding U, D^{-1/2} and Γ's factor (n×k).

References
----------
Niu, Dy & Jordan (2011), Dimensionality reduction for spectral clustering, AISTATS.
Chang, Chen, Cho, Castaldi, Silverman & Dy (2017), Clustering with domain-specific
usefulness scores, SDM.
Wu, Li, Ioannidis, Kaeli, Sznaier & Dy (2018), Iterative spectral method for alternative
clustering, AISTATS (KDAC).
Wu, Miller, Chang, Sznaier & Dy (2019), Solving interpretable kernel dimension reduction,
NeurIPS (ISM).
Wu, Miller, Chang & Dy (2020), Spectral non-convex optimization for dimension reduction with
Hilbert-Schmidt independence criterion (ISM+).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import ClusterMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import type_of_target

from ldr.core.deprecation import user_stacklevel
from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import moments
from ldr.data.validation import check_labels, is_lazy, validate_data
from ldr.estimators.base import (
    AffineMap,
    FitData,
    LinearDR,
    WeightedFit,
    deprecated_attribute,
    random_seed,
    start_point,
)
from ldr.estimators.hsic_alternation import HSICAlternation
from ldr.estimators.progress import round_lines, solve_shown
from ldr.estimators.spectral import check_spectral, cluster_rows, gaussian_gamma
from ldr.kernels import Gaussian, make_kernel, median_distance
from ldr.kernels.family import MEDIAN_MAX_SAMPLES, in_namespace
from ldr.kernels.features import (
    check_approximation,
    describe_approximation,
    resolve_approximation,
)
from ldr.kernels.tiles import DEFAULT_MEMORY_BUDGET
from ldr.objectives.chunked_rows import ChunkedRows
from ldr.objectives.hsic import HSIC, ApproximateHSIC, label_gamma
from ldr.solvers import ISM

__all__ = ["APPROXIMATE_CYCLE_TOL", "APPROXIMATE_XTOL", "GAMMA_DENSE_MAX", "KDAC",
           "SemiSupervisedHSIC", "SupervisedHSIC", "UnsupervisedHSIC", "largest_eigengap",
           "w_step_solve_args"]

#: y_kernel="gaussian" forms Γ densely up to this many rows, a low-rank factor beyond
GAMMA_DENSE_MAX = 2000
#: ISM's cycle tolerance in a W-step on an approximate kernel (random features, Nyström).
#: Φ is then computed through the approximation's feature map (Nyström's: the landmarks'
#: kernel inverted with a 1e-6 ridge, :mod:`ldr.kernels.features`), whose rounding floor lies
#: far above float64's; ISM's steps and cycles settle at that floor, not at the exact
#: objective's, so the W-step's tolerances stand above it: the W-step ends where the
#: approximation has determined its answer instead of spending ISM's patience at noise level.
APPROXIMATE_CYCLE_TOL = 1e-6
#: the step tolerance (xtol of :func:`ldr.solve`) of that W-step, above the same floor
APPROXIMATE_XTOL = 1e-7


def center(F: np.ndarray) -> np.ndarray:
    """H F, H = I − 11ᵀ/n (in F's namespace)."""
    return F - arrays.namespace(F).mean(F, axis=0)


def one_hot(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, Y)``: the class labels y (n of them, checked) and their n×c one-hot
    matrix."""
    classes, codes = check_labels(y, n, "y")
    return classes, np.eye(len(classes))[codes]


def host_eigenvalues(S) -> np.ndarray:
    """The ascending eigenvalues of the symmetric d×d matrix S (of any namespace), on the
    host."""
    return np.linalg.eigvalsh(np.asarray(arrays.to_host(S), dtype=float))


def largest_eigengap(eigenvalues: np.ndarray, q_max: int | None = None) -> int:
    """q* = argmax_q (λ_{q+1} − λ_q) over ascending eigenvalues (ISM+ Eq. 50), 1 ≤ q < d."""
    w = np.sort(np.asarray(eigenvalues))
    q_max = len(w) - 1 if q_max is None else min(q_max, len(w) - 1)
    gaps = np.diff(w)[:q_max]
    return int(np.argmax(gaps)) + 1


def w_step_solve_args(estimator, approximate: bool) -> tuple:
    """``(solver, options)`` of an HSIC estimator's W-step: its ``solver`` and the options of
    :func:`ldr.solve` from its settings; for the default solver (None) on an ``approximate``
    kernel, ISM with :data:`APPROXIMATE_CYCLE_TOL` and, unless ``solver_params`` sets one,
    xtol :data:`APPROXIMATE_XTOL`."""
    options = estimator._solve_options()
    if estimator.solver is not None or not approximate:
        return estimator.solver, options
    if "xtol" not in (estimator.solver_params or {}):
        options["xtol"] = APPROXIMATE_XTOL
    return ISM(cycle_tol=APPROXIMATE_CYCLE_TOL), options


class _HSICBase(LinearDR):
    """What the four paradigms share: the parameters' checks, the standardization, the
    kernel, the W-step and the fitted map."""

    _objective_class = HSIC
    W_ = deprecated_attribute("M_", "W_")

    def _requires_y(self) -> bool:
        return True

    def _validate_with_y(self, X, y, dtypes) -> tuple:
        """X validated; y as given (on the host), checked by the paradigm's Γ."""
        X = validate_data(self, X, dtype=dtypes, ensure_min_samples=2)
        return X, y if arrays.foreign(y) is None else arrays.to_host(y)

    # --- the pipeline's hooks (ldr.estimators.base) -------------------------------------
    def _check_settings(self, data: FitData) -> None:
        """The parameters checked before any work (a subclass adds its own);
        ``data.params["n_kernel_features"]``, given under either name."""
        d = data.n_features
        if d < 2:
            raise ParameterError("n_components", f"n_features = {d} leaves no proper subspace "
                                 "to reduce to: pass data with at least two features")
        self._n_components(data)  # (its checks, before the kernel and Γ are built)
        if self.sigma is not None and not (np.isscalar(self.sigma) and self.sigma > 0):
            raise ParameterError("sigma", f"must be a positive number, got {self.sigma!r}")
        m, name = self._renamed("n_kernel_features", "n_features")
        try:
            check_approximation(self.approximation, m)
        except ParameterError as exc:
            raise (exc.renamed(name) if exc.param == "n_features" else exc) from None
        data.params["n_kernel_features"] = int(m)

    def _reads_chunks(self) -> bool:
        """A Dask array or memmap stays out of memory with an approximate Gaussian kernel
        (``approximation`` "auto", "nystroem" or "rff"; the in-process ``backend``): one pass
        over the chunks gives the standardization, a seeded sample of rows σ, the landmark
        rows are gathered, and every Φ maps the chunks to d×d sums."""
        gaussian = self.kernel is None or (isinstance(self.kernel, str)
                                           and self.kernel == "gaussian")
        return gaussian and self.approximation is not None and self.backend == "numpy"

    def _prepare(self, data: FitData) -> None:
        """The settings checked; ``mean_``, ``scale_`` and ``kernel_`` from the rows, in their
        namespace; ``data.X`` becomes the standardized rows — there when the W-step computes
        in that namespace (:meth:`_fits_in_namespace`), else a host copy of them — or a Dask
        array's or memmap's :class:`~ldr.objectives.chunked_rows.ChunkedRows`, read a chunk
        at a time."""
        self._check_settings(data)
        if data.lazy:
            self._prepare_chunks(data)
            return
        rows = data.X  # float64, checked (the pipeline's validation)
        xp = arrays.namespace(rows)
        w = data.weights
        if w is None:
            mean = xp.mean(rows, axis=0)
            sd = xp.std(rows, axis=0)
        else:
            wx = arrays.like(w, rows)
            mean = (wx @ rows) / xp.sum(wx)
            sd = xp.sqrt(wx @ (rows - mean) ** 2 / xp.sum(wx))
        self.mean_ = arrays.host_float64(mean)
        sd = arrays.host_float64(sd)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        Xs = rows - arrays.like(self.mean_, rows)  # the one standardized copy (the objectives
        Xs /= arrays.like(self.scale_, rows)      # keep it: copy=False); in place: one n×d
        self.kernel_ = self._kernel(Xs, w)        # temporary fewer at the peak
        data.params["approximation"] = resolve_approximation(
            self.approximation, Xs.shape[0],
            type(self.kernel_) is Gaussian and self.backend == "numpy")
        data.X = Xs if data.space is None or self._fits_in_namespace(data) else \
            np.asarray(arrays.to_host(Xs), dtype=np.float64)

    def _fits_in_namespace(self, data: FitData) -> bool:
        """Whether the W-step computes in the rows' namespace: :class:`ldr.objectives.HSIC`
        or :class:`ldr.objectives.hsic.ApproximateHSIC` with in-process block sums and a
        built-in kernel (or a conic combination of them:
        :func:`ldr.kernels.family.in_namespace`)."""
        return (self._computes_in_namespace and self.backend == "numpy"
                and in_namespace(self.kernel_))

    def _prepare_chunks(self, data: FitData) -> None:
        """:meth:`_prepare` for a Dask array or memmap: the mean and scale by one pass over
        its chunks (each chunk's values checked), σ the median distance of the same seeded
        sample of standardized rows as in memory (:func:`ldr.kernels.median_distance`), and
        the approximation at any n ("auto": Nyström; the exact kernel needs every pair in
        memory).  The labels y are read into memory."""
        stats = moments(data.X, name="X").on_host()
        self.mean_ = stats.mean
        sd = np.sqrt(np.diag(stats.scatter) / stats.n)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        rows = ChunkedRows(data.X, self.mean_, self.scale_)
        n = rows.shape[0]
        sample = np.arange(n)
        if n > MEDIAN_MAX_SAMPLES:  # median_distance's own draw, the rows gathered in order
            sample = np.sort(np.random.default_rng(0).choice(n, MEDIAN_MAX_SAMPLES,
                                                             replace=False))
        sigma = self.sigma if self.sigma is not None else median_distance(rows.take(sample))
        self.kernel_ = Gaussian(sigma)
        data.X = rows
        if is_lazy(data.y):
            data.y = np.asarray(data.y.compute())
        approximation = self.approximation
        data.params["approximation"] = "nystroem" if approximation == "auto" else approximation

    def _n_components(self, data: FitData):
        """q: an integer with 1 <= q < n_features; None gives n_features − 1; "auto" gives
        None here (the largest eigengap, chosen in the W-step)."""
        d = data.n_features
        q = self.n_components
        if isinstance(q, str) and q == "auto":
            return None
        if q is None:
            return d - 1
        if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q < d:
            raise ParameterError("n_components", f"must be None, 'auto' or an integer q with "
                                 f"1 <= q < n_features = {d}, got {q!r}")
        return int(q)

    def _kernel(self, Xs, weights=None):
        """The kernel on XW: the Gaussian of width ``sigma`` (default the median pairwise
        distance of the standardized rows, of the rows repeated by their ``weights``), or
        ``kernel`` fitted to them."""
        if self.kernel is None or (isinstance(self.kernel, str) and self.kernel == "gaussian"):
            sigma = (self.sigma if self.sigma is not None
                     else median_distance(Xs, weights=weights))
            return Gaussian(sigma)
        return make_kernel(self.kernel).fit(Xs, weights)

    def _hsic(self, data: FitData, Gamma, q: int):
        """The W-step's objective on the standardized rows ``data.X``: exact :class:`HSIC`
        (row blocks within ``memory_budget``) or, with an approximation (``approximation``
        resolved at n), :class:`ApproximateHSIC` seeded by ``random_state``."""
        approximation = data.params["approximation"]
        if approximation is None:
            return HSIC(data.X, Gamma, q, kernel=self.kernel_, block_size=self.block_size,
                        memory_budget=self.memory_budget, backend=self.backend, copy=False)
        return ApproximateHSIC(data.X, Gamma, q, kernel=self.kernel_,
                               approximation=approximation,
                               n_features=data.params["n_kernel_features"],
                               random_state=random_seed(self.random_state),
                               memory_budget=self.memory_budget, copy=False)

    def _run(self, obj, start):
        """:func:`ldr.solve` with the W-step's solver and settings
        (:func:`w_step_solve_args`); a ConvergenceWarning when it did not converge."""
        solver, options = w_step_solve_args(self, isinstance(obj, ApproximateHSIC))
        res = solve_shown(type(self).__name__, self.verbose, obj, solver, start, options)
        self._warn_unconverged(res, "raise max_iter, loosen tol, or use "
                                    "solver=['ism', 'trust-region']", "the W-step")
        # autograd's cached gradient closure is rebuilt on demand and cannot be pickled
        obj.__dict__.pop("_ag_grad", None)
        return res

    def _w_step(self, data: FitData, Gamma, q, start=None, known=None, obj=None) -> tuple:
        """``(objective, Result)``: −tr(Γ K_XW) minimized over W on Grassmann(d, q) from
        ``start`` (None: the estimator's ``start``; ISM's spectral start by default, the
        same whichever solver is chosen); ``known``: (cost, Φ) at ``start`` when the caller
        has them; ``obj``: the objective when the caller has built it.  q None
        (``n_components="auto"``): q at the largest eigengap of Φ₀, then, when the solution's
        Φ has it elsewhere, solved again there (ISM+ Eq. 50)."""
        if q is None:
            probe = self._hsic(data, Gamma, 1)
            q = largest_eigengap(host_eigenvalues(probe.phi0()))
            obj = self._hsic(data, Gamma, q)
            res = self._run(obj, start_point(self.start, obj))
            at_solution = largest_eigengap(host_eigenvalues(obj.phi(res.M)))
            if at_solution == q:
                return obj, res
            obj = self._hsic(data, Gamma, at_solution)
            return obj, self._run(obj, start_point(self.start, obj))
        if obj is None:
            obj = self._hsic(data, Gamma, q)
        if known is not None and isinstance(obj, HSIC):  # (cost, Φ) at start: no pass there
            obj.remember(start, *known)
        if start is None:
            start = start_point(self.start, obj)
        return obj, self._run(obj, start)

    def _finish(self, data: FitData, obj, result):
        """The point on the host; ``n_components_`` and ``eigengap_`` (λ_{q+1} − λ_q of Φ at
        it); the objective's kept values dropped (``objective_`` keeps no n×n arrays)."""
        M = np.asarray(arrays.to_host(result.M), dtype=np.float64)
        self.approximation_ = describe_approximation(data.params["approximation"],
                                                     data.params["n_kernel_features"])
        q = M.shape[1]
        w = host_eigenvalues(obj.phi(result.M))
        self.eigengap_ = float(w[q] - w[q - 1])
        self.n_components_ = q
        if isinstance(obj, HSIC):
            obj.forget()
        if isinstance(data.X, ChunkedRows):
            data.X.release()
        return M

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        """``((X − mean_) / scale_) @ M_`` as ``(X − mean_) @ (M_ / scale_[:, None])``."""
        return AffineMap(self.mean_, M / self.scale_[:, None])


class SupervisedHSIC(WeightedFit, _HSICBase):
    """Supervised HSIC dimension reduction: maximize HSIC(XW, y), Γ = H K_Y H / n².

    Minimizes −tr(Γ K_XW) over W on Grassmann(d, q) (ISM Eq. 1, the supervised paradigm) on
    the standardized rows, with K_Y = YYᵀ for one-hot class labels or a kernel on
    continuous targets (module docstring; under ``array_api_dispatch`` the fit runs in the
    input's namespace).

    ``fit(X, y, sample_weight=w)`` takes frequency weights: the standardization, the
    Gaussian's median width and Γ are those of the rows repeated by their weights, Γ folded
    onto the distinct rows as Γ_w = D H_w K_Y H_wᵀ D / N² (D = diag(w), N = Σ w_i,
    H_w = I − 1wᵀ/N), so that tr(Γ_w K_XW) is the repeated rows' tr(Γ K_XW).

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        q, the subspace dimension (1 <= q < n_features); "auto" takes the largest eigengap
        of Φ (ISM+ Eq. 50); None the natural maximum n_features − 1.
    kernel : "gaussian" or an ISM-family kernel (:mod:`ldr.kernels`), default "gaussian"
        The kernel on XW.
    sigma : float, optional
        The Gaussian's width; default the median pairwise distance of the standardized rows.
    y_kernel : {"onehot", "linear", "gaussian"}, default "onehot"
        K_Y = YYᵀ with one-hot labels (classification), or a linear / Gaussian kernel on
        standardized continuous targets.  A continuous y (scikit-learn's ``type_of_target``
        "continuous") with "onehot" is a ValueError that names the other two.  "gaussian"
        forms a dense n×n Γ up to ``GAMMA_DENSE_MAX`` samples, a Nyström factor with
        max(n_kernel_features, 256) landmarks beyond.
    solver : str, Solver, list of them or None, default None
        The W-step's solver; None: the HSIC objective's default, ``["ism", "trust-region"]``
        (ISM's spectral iterations, then a second-order polish that certifies the point and
        repairs an ISM cycle); with an ``approximation``, ISM with
        :data:`~ldr.estimators.hsic.APPROXIMATE_CYCLE_TOL` and xtol
        :data:`~ldr.estimators.hsic.APPROXIMATE_XTOL`.
    start : "heuristic", "random" or array, default "heuristic"
        The W-step's start: ISM's spectral start (the minimizing eigenvectors of Φ₀), a
        random point seeded by ``random_state``, or an (n_features, q) array.
    tol : float or None, default None
        The W-step's gradient tolerance, relative to the problem's gradient scale
        (:func:`ldr.solve`'s ``tol``; None: its default for the W-step's float64 rows,
        1e-8).
    max_iter : int, default 500
        The W-step's iterations, every solver stage and Hessian-vector product counted.
    solver_params : dict, optional
        The other options of :func:`ldr.solve` (``xtol``, ``ftol``, ``max_time``, ...).
    random_state : int, RandomState, Generator or None, default 0
        Seeds a random start, the random features and the landmarks; None: fresh entropy.
    block_size : int, optional
        Rows per block of the W-step's kernel passes.
    memory_budget : float, default 256 MiB
        Bytes for the W-step's b×n working arrays; the block size is chosen from it, so
        memory is O(n·(block + d)), never O(n²) (for class labels or
        ``y_kernel="linear"``).
    backend : {"numpy", "dask"}, default "numpy"
        The kernel passes in-process or as Dask tasks on the current scheduler (e.g. a
        ``dask.distributed`` client).
    approximation : {"auto", None, "rff", "nystroem"}, default "auto"
        None: the exact kernel, Φ in O(n²·(d + q)); "rff" or "nystroem": the Gaussian kernel
        on XW approximated with ``n_kernel_features`` random Fourier features or Nyström
        landmarks, seeded by ``random_state``, Φ in O(n·m·(d + q))
        (:class:`ldr.objectives.hsic.ApproximateHSIC`).  "auto": exact up to
        :data:`ldr.kernels.features.EXACT_MAX_SAMPLES` rows, Nyström beyond (for the Gaussian
        kernel with ``backend="numpy"``; exact otherwise);
        ``approximation_`` says which.
    n_kernel_features : int, default 512
        m, the approximation's number of random features or landmarks (its error knob).
    n_features : deprecated
        The former name of ``n_kernel_features``; warns, removed in the next release.

    verbose : int, default 0
        0: silent; 1 or more: a progress line per solver iteration on standard output
        (:mod:`ldr.estimators.progress`).

    Attributes
    ----------
    M_ : (n_features, n_components) array
        The orthonormal W in standardized coordinates (``W_`` is its deprecated alias).
    components_ : (n_components, n_features)
        ``M_.T``.
    map_ : AffineMap
        ``transform(X) == (X − mean_) @ (M_ / scale_[:, None])``.
    mean_, scale_ : (n_features,)
        The standardization: ``(X − mean_) / scale_``.
    n_components_ : int
    eigengap_ : float
        λ_{q+1} − λ_q of Φ at ``M_`` (ISM+ Eq. 49; positive at a minimum ISM certifies).
    kernel_ : Kernel
        The kernel on XW, fitted.
    approximation_ : str or None
        None for the exact kernel; else a sentence naming its approximation.
    classes_ : (n_classes,)
        The class labels (``y_kernel="onehot"``).
    cost_, n_iter_, result_, objective_, n_features_in_ : see :class:`LinearDR`
        Of the W-step.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> Z = SupervisedHSIC(n_components=2).fit_transform(X, y)
    >>> Z.shape
    (178, 2)
    """

    _computes_in_namespace = True

    def __init__(self, n_components=None, *, kernel="gaussian", sigma=None, y_kernel="onehot",
                 solver=None, start="heuristic", tol=None, max_iter=500, solver_params=None,
                 verbose=0,
                 random_state=0, block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET,
                 backend="numpy", approximation="auto", n_kernel_features=512,
                 n_features="deprecated"):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.y_kernel = y_kernel
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.block_size = block_size
        self.memory_budget = memory_budget
        self.backend = backend
        self.approximation = approximation
        self.n_kernel_features = n_kernel_features
        self.n_features = n_features

    def _prepare(self, data: FitData) -> None:
        """The standardization and the kernel (the base's, on the host), Γ from y
        (``data.derived["Gamma"]``); the rows standardized in their namespace where the
        W-step runs there (module docstring)."""
        super()._prepare(data)
        data.derived["Gamma"] = self._gamma(data.y, data.X.shape[0],
                                            data.params["n_kernel_features"], data.weights)

    def _gamma(self, y, n: int, m: int, weights=None):
        """Γ = H K_Y H / n² from the targets (``classes_`` for class labels); with frequency
        weights w (N = Σ w_i, D = diag(w)), the Γ of the rows repeated by their weights
        folded onto the distinct rows, Γ_w = D H_w K_Y H_wᵀ D / N² with H_w = I − 1wᵀ/N:
        tr(Γ_rep K_rep) = tr(Γ_w K) (:meth:`_weighted_gamma`)."""
        if self.y_kernel not in ("onehot", "linear", "gaussian"):
            raise ParameterError("y_kernel", f"expected 'onehot', 'linear' or 'gaussian', "
                                 f"got {self.y_kernel!r}")
        if weights is not None:
            return self._weighted_gamma(y, n, weights)
        if self.y_kernel == "onehot":
            refuse_continuous(y)
            self.classes_, Gamma = label_gamma(y, n)
            return Gamma
        Y = self._standardized_responses(y, n)
        if self.y_kernel == "linear":
            return center(Y), np.full(Y.shape[1], 1.0 / n**2)
        sigma = median_distance(Y) if n > 1 else 1.0  # y_kernel == "gaussian"
        if n > GAMMA_DENSE_MAX:  # a low-rank factor: never n×n
            return gaussian_gamma(Y, sigma, max(m, 256), random_seed(self.random_state))
        KY = Gaussian(sigma).gram(Y, np.eye(Y.shape[1]))
        KY = KY - KY.mean(axis=0)
        return (KY - KY.mean(axis=1, keepdims=True)) / n**2

    def _standardized_responses(self, y, n: int, w: np.ndarray | None = None) -> np.ndarray:
        """The numeric responses y (linear and Gaussian y-kernels) as an n × k array, checked
        (numbers, n rows, finite) and standardized per column — by their weighted mean and
        standard deviation with frequency weights ``w``."""
        self.__dict__.pop("classes_", None)  # (a previous fit's labels)
        try:
            Y = np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError("y", f"y_kernel={self.y_kernel!r} needs numeric responses; "
                                 "class labels take y_kernel='onehot'") from None
        if Y.shape[0] != n:
            raise ParameterError("y", f"has {Y.shape[0]} rows but X has {n} samples")
        Y = Y.reshape(n, -1)
        if not np.all(np.isfinite(Y)):
            raise ParameterError("y", "contains NaN or infinity")
        if w is None:
            mean = Y.mean(axis=0)
            sd = Y.std(axis=0)
        else:
            N = float(np.sum(w))
            mean = (w @ Y) / N
            sd = np.sqrt(w @ (Y - mean) ** 2 / N)
        return (Y - mean) / np.where(sd > 0, sd, 1.0)

    def _weighted_gamma(self, y, n: int, w: np.ndarray):
        """Γ_w (``_gamma``'s docstring): for one-hot labels or the linear y-kernel the factor
        (D (Y − ȳ_w), 1/N²); for the Gaussian y-kernel the dense n×n matrix (up to
        ``GAMMA_DENSE_MAX`` rows)."""
        N = float(np.sum(w))
        if self.y_kernel == "onehot":
            refuse_continuous(y)
            self.classes_, codes = check_labels(y, n, "y")
            Y = np.eye(len(self.classes_))[codes]
        else:
            Y = self._standardized_responses(y, n, w)
        if self.y_kernel != "gaussian":
            F = w[:, None] * (Y - (w @ Y) / N)
            return F, np.full(F.shape[1], 1.0 / N**2)
        if n > GAMMA_DENSE_MAX:
            raise ParameterError("sample_weight", f"with y_kernel='gaussian', weights take at "
                                 f"most {GAMMA_DENSE_MAX} samples (Γ is formed densely); "
                                 "use y_kernel='linear' or 'onehot', or drop the weights")
        KY = Gaussian(median_distance(Y, weights=w)).gram(Y, np.eye(Y.shape[1]))
        A = KY - (w @ KY)[None, :] / N
        B = A - (A @ w)[:, None] / N
        return w[:, None] * B * w[None, :] / N**2

    def _fit_point(self, data: FitData, r) -> tuple:
        """The W-step (q chosen by the eigengap when ``n_components="auto"``)."""
        return self._w_step(data, data.derived["Gamma"], r)


def refuse_continuous(y) -> None:
    """Class labels only: a continuous y (scikit-learn's ``type_of_target``: "continuous" or
    "continuous-multioutput", i.e. floats that are not whole numbers) would otherwise become
    one class per distinct value."""
    try:
        kind = type_of_target(y, input_name="y")
    except ValueError:  # not array-like, mixed types: check_labels says what is wrong
        return
    if kind.startswith("continuous"):
        values = np.asarray(y)
        raise ParameterError(
            "y", f"is continuous (type_of_target: {kind!r}, {len(np.unique(values))} distinct "
            f"values in {values.shape[0]} samples), but y_kernel='onehot' (the default) "
            "treats y as class labels and would make one class per distinct value. For "
            "continuous targets pass y_kernel='linear' or y_kernel='gaussian'; for class "
            "labels stored as floats, cast them to int")


class _ClusteringHSIC(ClusterMixin, _HSICBase):
    """The alternation of W-steps and spectral U-steps (:class:`HSICAlternation`), in the
    rows' namespace on the exact route (module docstring); ``labels_`` by k-means on the
    final embedding."""

    _computes_in_namespace = True
    #: the U-step's matrix centered, H D^{-1/2} K D^{-1/2} H (KDAC)
    center_u = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # ClusterMixin declares none; transform keeps float32 as the base's does
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _check_settings(self, data: FitData) -> None:
        """The base's, and the alternation's settings."""
        super()._check_settings(data)
        k = self.n_clusters
        n = data.X.shape[0]
        if isinstance(k, bool) or not (isinstance(k, numbers.Integral) and 2 <= k < n):
            raise ParameterError("n_clusters", f"must be an integer in [2, n_samples), got "
                                 f"{k!r}")
        check_spectral(self.spectral)
        if isinstance(self.max_outer, bool) or not (
                isinstance(self.max_outer, numbers.Integral) and self.max_outer >= 1):
            raise ParameterError("max_outer", f"must be a positive integer, got "
                                 f"{self.max_outer!r}")
        if isinstance(self.outer_tol, bool) or not (isinstance(self.outer_tol, numbers.Real)
                                                   and self.outer_tol >= 0):
            raise ParameterError("outer_tol", f"must be a non-negative number, got "
                                 f"{self.outer_tol!r}")

    def _gamma(self, data: FitData, U, dm):
        """Γ of a round from the embedding U and D^{-1/2} (the paradigm's; module
        docstring)."""
        raise NotImplementedError

    def _reads_chunks(self) -> bool:
        """The base's, with the Nyström U-step (``spectral`` "auto" or "nystroem")."""
        return super()._reads_chunks() and self.spectral != "exact"

    def _fit_point(self, data: FitData, r) -> tuple:
        """The alternation (:mod:`ldr.estimators.hsic_alternation`); returns the last
        W-step's objective and Result (the alternation's outcome in
        ``data.derived["alternation"]``)."""
        options = self._solve_options()

        def gamma(U, dm):
            return self._gamma(data, U, dm)

        def objective(Gamma):
            return self._hsic(data, Gamma, r)

        def w_step(Gamma, start, known, obj):
            return self._w_step(data, Gamma, r, start, known, obj)

        alternation = HSICAlternation(
            data.X, self.kernel_, self.n_clusters, center=self.center_u,
            spectral=self.spectral, landmarks=data.params["n_kernel_features"],
            seed=random_seed(self.random_state), memory_budget=self.memory_budget,
            approximate=data.params["approximation"] is not None, gamma=gamma, objective=objective,
            w_step=w_step, q=r,
            # one ISM step a round until the alternation settles: the default solver, whose
            # first stage is ISM, and q fixed ("auto" chooses q in every W-step)
            inexact=self.solver is None and r is not None,
            spectral_start=isinstance(self.start, str) and self.start == "heuristic",
            tol=options["tol"], tol_scale=options.get("tol_scale", "auto"))
        outcome = alternation.run(self.max_outer, self.outer_tol, self.acceleration,
                                  round_lines(type(self).__name__, self.verbose))
        data.derived["alternation"] = outcome
        return outcome.objective, outcome.result

    def _finish(self, data: FitData, obj, result):
        """The base's, then the alternation's record (``U_``, ``history_``, ``n_outer_``,
        ``converged_``, a ConvergenceWarning when it did not converge) and ``labels_``."""
        M = super()._finish(data, obj, result)
        outcome = data.derived["alternation"]
        self.n_outer_ = outcome.n_rounds
        self.history_ = outcome.history
        self.converged_ = outcome.change <= self.outer_tol
        if not self.converged_:
            warnings.warn(f"{type(self).__name__}: the alternation did not converge in "
                          f"max_outer={self.max_outer} rounds (last change of U "
                          f"{outcome.change:.2e} > outer_tol {self.outer_tol:g}); raise "
                          "max_outer or loosen outer_tol", ConvergenceWarning,
                          stacklevel=user_stacklevel())
        self.U_ = outcome.U
        self.labels_ = cluster_rows(outcome.U, self.n_clusters, self.random_state)
        # n_iter_ counts the alternation's rounds, as scikit-learn's clusterers count theirs
        # (result_ is the last W-step's)
        self.n_iter_ = self.n_outer_
        return M

    def fit_predict(self, X, y=None):
        """``fit(X, y)``, then ``labels_``."""
        return self.fit(X, y).labels_


class UnsupervisedHSIC(_ClusteringHSIC):
    """Unsupervised HSIC dimension reduction with spectral clustering (Niu et al. 2011).

    Alternates W ← argmin −tr(H UUᵀ H K_XW) (ISM Eq. 1 with Γ = H UUᵀ H / n²) and U ← the
    spectral embedding of K_XW, from U of the full-dimensional kernel
    (:mod:`ldr.estimators.hsic_alternation`).  ``labels_`` are k-means on the
    row-normalized U.

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        As :class:`SupervisedHSIC`.
    n_clusters : int, default 2
        k, the number of clusters and the embedding's dimension.
    kernel, sigma, solver, start, tol, max_iter, solver_params, verbose, random_state,
    block_size, memory_budget, backend, approximation, n_kernel_features : see
    :class:`SupervisedHSIC`
        The W-step's (``max_iter``: each W-step's budget).
    max_outer : int, default 30
        Rounds of the alternation at most.
    outer_tol : float, default 1e-6
        The alternation stops when a round moves the embedding it started from by
        sin θ(U_k, U_k⁺) ≤ outer_tol (its fixed-point residual).
    acceleration : {"anderson", None}, default "anderson"
        Anderson acceleration of the alternation (:mod:`ldr.estimators.anderson`; Walker &
        Ni 2011), or None (the plain alternation), with the same fixed points.  With the
        default solver a round's W-step is one ISM step until the alternation settles, and
        the last rounds are exact (:mod:`ldr.estimators.hsic_alternation`): the same fixed
        points, ``result_`` the last exact W-step's.
    spectral : {"auto", "exact", "nystroem"}, default "auto"
        The U-step's embedding: the dense n×n kernel's, or Nyström's with
        ``n_kernel_features`` landmarks (n×m, never n×n); "auto": exact up to
        ``DENSE_MAX`` samples (:mod:`ldr.estimators.spectral`).
    n_features : deprecated
        The former name of ``n_kernel_features``; warns, removed in the next release.

    Attributes
    ----------
    labels_ : (n_samples,)
        k-means on the row-normalized final embedding (Ng, Jordan & Weiss 2001).
    U_ : (n_samples, n_clusters)
        The final spectral embedding.
    M_, components_, map_, mean_, scale_, n_components_, eigengap_, kernel_, approximation_ :
        see :class:`SupervisedHSIC` (of the last W-step)
    history_ : list of dict
        One record per round (:class:`ldr.estimators.hsic_alternation.AlternationResult`).
    n_outer_, n_iter_ : int
        The rounds of the alternation.
    converged_ : bool
        Whether the last round's change is within ``outer_tol`` (else a ConvergenceWarning).
    cost_, result_, objective_ : the last exact W-step's
    """

    def __init__(self, n_components=None, *, n_clusters=2, kernel="gaussian", sigma=None,
                 solver=None, start="heuristic", tol=None, max_iter=500, solver_params=None,
                 verbose=0,
                 max_outer=30, outer_tol=1e-6, acceleration="anderson", random_state=0,
                 block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET, backend="numpy",
                 approximation="auto", n_kernel_features=512, spectral="auto",
                 n_features="deprecated"):
        self.n_components = n_components
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.sigma = sigma
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.max_outer = max_outer
        self.outer_tol = outer_tol
        self.acceleration = acceleration
        self.random_state = random_state
        self.block_size = block_size
        self.memory_budget = memory_budget
        self.backend = backend
        self.approximation = approximation
        self.n_kernel_features = n_kernel_features
        self.spectral = spectral
        self.n_features = n_features

    def _requires_y(self) -> bool:
        return False

    def _gamma(self, data: FitData, U, dm):
        """Γ = H UUᵀ H / n² as the factor (HU, 1/n²)."""
        n = U.shape[0]
        return center(U), np.full(U.shape[1], 1.0 / n**2)


class SemiSupervisedHSIC(_ClusteringHSIC):
    """Semi-supervised HSIC dimension reduction (Chang et al. 2017).

    Given expert scores Ŷ (n × m), alternates W ← argmin −tr((Ω + μΨ) K_XW) with
    Ω = D^{-1/2}UUᵀD^{-1/2} and Ψ = H ŶŶᵀ H, a linear kernel on standardized scores (ISM
    Eqs. 2–3), and the spectral U-step.  ``mu`` weighs the experts against clustering
    quality.  ``fit(X, y)``: y the expert scores, (n,) or (n, m), or class labels (one-hot
    encoded).

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        As :class:`SupervisedHSIC`.
    n_clusters : int, default 2
        k, the number of clusters and the embedding's dimension.
    mu : float ≥ 0, default 1
        The weight μ of the experts' scores.
    kernel, sigma, solver, start, tol, max_iter, solver_params, verbose, max_outer,
    outer_tol, acceleration, random_state, block_size, memory_budget, backend, approximation,
    n_kernel_features, spectral, n_features : see :class:`UnsupervisedHSIC`

    Attributes
    ----------
    labels_, U_, M_, components_, map_, mean_, scale_, n_components_, eigengap_, kernel_,
    history_, n_outer_, n_iter_, converged_, cost_, result_, objective_ :
        see :class:`UnsupervisedHSIC`
    """

    def __init__(self, n_components=None, *, n_clusters=2, mu=1.0, kernel="gaussian",
                 sigma=None, solver=None, start="heuristic", tol=None, max_iter=500,
                 solver_params=None,
                 verbose=0, max_outer=30, outer_tol=1e-6, acceleration="anderson",
                 random_state=0, block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET,
                 backend="numpy", approximation="auto", n_kernel_features=512, spectral="auto",
                 n_features="deprecated"):
        self.n_components = n_components
        self.n_clusters = n_clusters
        self.mu = mu
        self.kernel = kernel
        self.sigma = sigma
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.max_outer = max_outer
        self.outer_tol = outer_tol
        self.acceleration = acceleration
        self.random_state = random_state
        self.block_size = block_size
        self.memory_budget = memory_budget
        self.backend = backend
        self.approximation = approximation
        self.n_kernel_features = n_kernel_features
        self.spectral = spectral
        self.n_features = n_features

    def _check_settings(self, data: FitData) -> None:
        super()._check_settings(data)
        if not (np.isscalar(self.mu) and self.mu >= 0):
            raise ParameterError("mu", f"must be a non-negative number, got {self.mu!r}")

    def _prepare(self, data: FitData) -> None:
        """The base's, and the experts' scores standardized and centered
        (``data.derived["scores"]``)."""
        super()._prepare(data)
        n = data.X.shape[0]
        Y = np.asarray(data.y)
        if Y.shape[0] != n:
            raise ParameterError("y", f"has {Y.shape[0]} rows but X has {n} samples")
        if Y.dtype.kind in "OUSb" or Y.ndim == 1 and Y.dtype.kind in "iu":
            Y = one_hot(Y, n)[1]
        Y = np.asarray(Y, dtype=float).reshape(n, -1)
        if not np.all(np.isfinite(Y)):
            raise ParameterError("y", "contains NaN or infinity")
        sd = Y.std(axis=0)
        data.derived["scores"] = arrays.like(center(Y / np.where(sd > 0, sd, 1.0)), data.X)

    def _gamma(self, data: FitData, U, dm):
        """Γ = (D^{-1/2}UUᵀD^{-1/2} + μ H ŶŶᵀ H) / n² as the factor ([D^{-1/2}U, HŶ],
        [1, μ] / n²)."""
        scores = data.derived["scores"]
        n = U.shape[0]
        F = arrays.namespace(U).concat([dm[:, None] * U, scores], axis=1)
        s = np.concatenate([np.ones(U.shape[1]), np.full(scores.shape[1], self.mu)])
        return F, s / n**2


class KDAC(_ClusteringHSIC):
    """Kernel dimension alternative clustering (Wu et al. 2018): a clustering unlike a given
    one.

    Maximizes HSIC(XW, U) − λ HSIC(XW, Y) with the normalized kernel D^{-1/2}K_XW D^{-1/2}
    (KDAC Eq. 2): the W-step's Γ = D^{-1/2}H(UUᵀ − λYYᵀ)HD^{-1/2} (its Eq. 4), Y the one-hot
    existing labels; the U-step the top-k eigenvectors of H D^{-1/2}K_XW D^{-1/2} H (its
    Eq. 3); ``labels_`` are k-means on U.  ``fit(X, y)``: y the existing clustering's
    labels, which the new clustering should avoid.

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        As :class:`SupervisedHSIC`.
    n_clusters : int, default 2
        k, the number of clusters and the embedding's dimension.
    lam : float ≥ 0, default 0.5
        The weight λ of novelty against the existing clustering.
    kernel, sigma, solver, start, tol, max_iter, solver_params, verbose, max_outer,
    outer_tol, acceleration, random_state, block_size, memory_budget, backend, approximation,
    n_kernel_features, spectral, n_features : see :class:`UnsupervisedHSIC`

    Attributes
    ----------
    existing_classes_ : (n_existing,)
        The existing clustering's labels.
    labels_, U_, M_, components_, map_, mean_, scale_, n_components_, eigengap_, kernel_,
    history_, n_outer_, n_iter_, converged_, cost_, result_, objective_ :
        see :class:`UnsupervisedHSIC`
    """

    center_u = True

    def __init__(self, n_components=None, *, n_clusters=2, lam=0.5, kernel="gaussian",
                 sigma=None, solver=None, start="heuristic", tol=None, max_iter=500,
                 solver_params=None,
                 verbose=0, max_outer=30, outer_tol=1e-6, acceleration="anderson",
                 random_state=0, block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET,
                 backend="numpy", approximation="auto", n_kernel_features=512, spectral="auto",
                 n_features="deprecated"):
        self.n_components = n_components
        self.n_clusters = n_clusters
        self.lam = lam
        self.kernel = kernel
        self.sigma = sigma
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.max_outer = max_outer
        self.outer_tol = outer_tol
        self.acceleration = acceleration
        self.random_state = random_state
        self.block_size = block_size
        self.memory_budget = memory_budget
        self.backend = backend
        self.approximation = approximation
        self.n_kernel_features = n_kernel_features
        self.spectral = spectral
        self.n_features = n_features

    def _check_settings(self, data: FitData) -> None:
        super()._check_settings(data)
        if not (np.isscalar(self.lam) and self.lam >= 0):
            raise ParameterError("lam", f"must be a non-negative number, got {self.lam!r}")

    def _prepare(self, data: FitData) -> None:
        """The base's, ``existing_classes_`` and the existing clustering's one-hot matrix
        (``data.derived["existing"]``)."""
        super()._prepare(data)
        self.existing_classes_, existing = one_hot(data.y, data.X.shape[0])
        data.derived["existing"] = arrays.like(existing, data.X)

    def _gamma(self, data: FitData, U, dm):
        """Γ = D^{-1/2}H(UUᵀ − λYYᵀ)HD^{-1/2} / n² as the weighted factor (H[U, Y],
        [1, −λ] / n², D^{-1/2})."""
        existing = data.derived["existing"]
        n = U.shape[0]
        F = center(arrays.namespace(U).concat([U, existing], axis=1))
        s = np.concatenate([np.ones(U.shape[1]), np.full(existing.shape[1], -self.lam)])
        return F, s / n**2, dm
