"""HSIC-based interpretable kernel dimension reduction in its four paradigms (ISM papers).

Every estimator standardizes X per feature, then alternates (for the clustering paradigms)
between a **W-step** — minimize −tr(Γ K_XW) over W on Grassmann(d, q) with any solver (ISM by
default, see :class:`ldr.objectives.HSIC`) — and a **U-step** — spectral clustering of the
projected data.  Γ is built as a low-rank factor ``(F, s)``, Γ = F diag(s) Fᵀ, divided by n²
(the empirical HSIC's scale):

============================  ===========================================================
paradigm                      Γ
============================  ===========================================================
supervised                    H K_Y H,  K_Y = YYᵀ (one-hot labels) or a kernel on continuous y
unsupervised (Niu et al.)     H UUᵀ H,  U the spectral embedding of K_XW
semi-supervised (Chang)       D^{-1/2}UUᵀD^{-1/2} + μ H K_Ŷ H,  Ŷ expert scores
alternative (KDAC)            D^{-1/2}H(UUᵀ − λYYᵀ)HD^{-1/2},  Y the existing clustering
============================  ===========================================================

with H = I − 11ᵀ/n and D = diag(K_XW 1).  The U-step takes the top-k eigenvectors of
D^{-1/2}K_XW D^{-1/2} (H D^{-1/2}K_XW D^{-1/2} H for KDAC) and labels are k-means on the
row-normalized U.  ``n_components="auto"`` picks q at the largest eigengap of Φ (ISM+
Eq. 50), first of Φ₀, then of Φ at the solution; None (the default) is the natural maximum
q = n_features − 1 (at q = n_features, K_XW is the kernel of the whole space and there is
nothing left to choose).

float32 X gives float32 ``transform`` output and fitted arrays; the W-step and the spectral
U-step run in float64 on the upcast data (:mod:`ldr.estimators._output`).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from ldr.data.rows import map_rows
from ldr.data.validation import check_labels, check_magnitude, is_lazy, refuse_lazy
from ldr.driver import solve
from ldr.errors import ParameterError
from ldr.estimators._base import (
    FLOAT_DTYPES,
    OutputMixin,
    as_output,
    cast_fitted,
    deprecated_attribute,
    output_dtype,
    preserve_float32,
    reraise_interrupt,
    seed_of,
    start_point,
    warn_if_unconverged,
)
from ldr.estimators._hsic_namespace import NamespaceOutput, fit_in, namespace_of, to_numpy
from ldr.estimators._hsic_rounds import fit_alternation
from ldr.estimators._namespace import answer_in, on_host
from ldr.estimators._output import validate_data
from ldr.estimators._solving import w_step_solve_args
from ldr.estimators._spectral import gaussian_gamma
from ldr.kernels import Gaussian, make_kernel, median_distance
from ldr.kernels.features import check_approximation
from ldr.kernels.tiles import DEFAULT_MEMORY_BUDGET
from ldr.objectives.hsic import HSIC, ApproximateHSIC, label_gamma

#: y_kernel="gaussian" forms Γ densely up to this many rows, a low-rank factor beyond
GAMMA_DENSE_MAX = 2000


def _center(F: np.ndarray) -> np.ndarray:
    """H F, H = I − 11ᵀ/n."""
    return F - F.mean(axis=0)


def _onehot(y, n: int) -> tuple[np.ndarray, np.ndarray]:
    classes, codes = check_labels(y, n, "y")
    return classes, np.eye(len(classes))[codes]


def largest_eigengap(eigenvalues: np.ndarray, q_max: int | None = None) -> int:
    """q* = argmax_q (λ_{q+1} − λ_q) over ascending eigenvalues (ISM+ Eq. 50), 1 ≤ q < d."""
    w = np.sort(np.asarray(eigenvalues))
    q_max = len(w) - 1 if q_max is None else min(q_max, len(w) - 1)
    gaps = np.diff(w)[:q_max]
    return int(np.argmax(gaps)) + 1


class _HSICBase(OutputMixin, TransformerMixin, BaseEstimator):
    """Shared parameters, scaling, the W-step and ``transform``."""

    W_ = deprecated_attribute("M_", "W_")

    def _validate_X(self, X):
        """``validate_data`` keeping float32; returns (X as float64, the output dtype)."""
        refuse_lazy(X, "X", type(self).__name__)
        X = validate_data(self, X, dtype=FLOAT_DTYPES, ensure_min_samples=2)
        return np.asarray(X, dtype=np.float64), output_dtype(X)

    def _check_params(self, X):
        d = X.shape[1]
        q = self.n_components
        if not (q is None or (isinstance(q, str) and q == "auto")
                or (isinstance(q, numbers.Integral) and not isinstance(q, bool)
                    and 1 <= q < d)):
            raise ParameterError("n_components", f"must be None, 'auto' or an integer q with "
                             f"1 <= q < n_features = {d}, got {q!r}")
        if d < 2:
            raise ParameterError("n_components", f"n_features = {d} leaves no proper subspace to "
                             f"reduce to: pass data with at least two features")
        if self.sigma is not None and not (np.isscalar(self.sigma) and self.sigma > 0):
            raise ParameterError("sigma", f"must be a positive number, got {self.sigma!r}")

    def _scale(self, X, fit: bool):
        check_magnitude(X, "X")
        if fit:
            self.mean_, sd = X.mean(axis=0), X.std(axis=0)
            self.scale_ = np.where(sd > 0, sd, 1.0)
        Xs = X - self.mean_   # the estimator's own copy (the objectives keep it: copy=False)
        Xs /= self.scale_     # in place: one n×d temporary fewer at the peak
        return Xs

    def _kernel(self, Xs):
        if self.kernel == "gaussian" or self.kernel is None:
            sigma = self.sigma if self.sigma is not None else median_distance(Xs)
            return Gaussian(sigma)
        return make_kernel(self.kernel).fit(Xs)

    def _objective(self, Xs, Gamma, q):
        """The W-step's objective: exact :class:`HSIC` (row blocks within ``memory_budget``)
        or, with ``approximation``, :class:`ApproximateHSIC` seeded by ``random_state``."""
        if self.approximation is None:
            return HSIC(Xs, Gamma, q, kernel=self.kernel_, block_size=self.block_size,
                        memory_budget=self.memory_budget, backend=self.backend, copy=False)
        check_approximation(self.approximation, self.n_features)
        seed = seed_of(self.random_state)
        return ApproximateHSIC(Xs, Gamma, q, kernel=self.kernel_,
                               approximation=self.approximation, n_features=self.n_features,
                               random_state=seed, memory_budget=self.memory_budget,
                               copy=False)

    def _w_step(self, Xs, Gamma, q, W0=None, known=None, obj=None):
        obj = self._objective(Xs, Gamma, q) if obj is None else obj
        if known is not None and isinstance(obj, HSIC):  # (cost, Φ) at W0: no pass there
            obj.remember(W0, *known)
        # every solver starts from ISM's spectral start (Φ₀'s minimizing eigenvectors,
        # start="heuristic") unless warm-started: deterministic, and the same start whichever
        # solver is chosen
        M0 = W0 if W0 is not None else start_point(self.start, obj)
        solver, options = w_step_solve_args(self)
        res = solve(obj, solver, M0, **options)
        reraise_interrupt(res)
        warn_if_unconverged(self, res, "raise max_iter, loosen tol, or use "
                            "solver=['ism', 'trust-region']", "the W-step", stacklevel=5)
        return obj, res

    def _fit_w(self, Xs, Gamma, W0=None, known=None, obj=None):
        """The W-step from W0 (``known``: the cost and Φ at W0, when the caller has them;
        ``obj``: the W-step's objective, when the caller has built it)."""
        q = Xs.shape[1] - 1 if self.n_components is None else self.n_components
        if isinstance(q, str):  # "auto"
            probe = self._objective(Xs, Gamma, 1)
            q = largest_eigengap(np.linalg.eigvalsh(to_numpy(probe.phi0())))
            obj, res = self._w_step(Xs, Gamma, q)
            q_final = largest_eigengap(np.linalg.eigvalsh(to_numpy(obj.phi(res.M))))
            if q_final != q:
                q = q_final
                obj, res = self._w_step(Xs, Gamma, q)
        else:
            obj, res = self._w_step(Xs, Gamma, q, W0, known, obj)
        w = np.linalg.eigvalsh(to_numpy(obj.phi(res.M)))  # d×d: on the host
        self.eigengap_ = float(w[q] - w[q - 1])
        self.n_components_ = q
        self.M_, self.components_, self.result_, self.n_iter_ = res.M, res.M.T, res, res.n_iter
        return obj, res

    def transform(self, X):
        """Project standardized X onto the learned subspace: ((X − mean)/scale) W."""
        check_is_fitted(self, "M_")
        if is_lazy(X):  # lazy, block by block
            return map_rows(X, self.transform, self.n_features_in_, self.M_.shape[1])
        X = validate_data(self, X, reset=False, dtype=FLOAT_DTYPES)
        Z = self._scale(np.asarray(X, dtype=np.float64), fit=False) @ self.M_
        return as_output(Z, output_dtype(X))


class SupervisedHSIC(NamespaceOutput, _HSICBase):
    """Supervised HSIC dimension reduction: maximize HSIC(XW, y), Γ = H K_Y H.

    Tensors under ``array_api_dispatch`` (fit on the device): :mod:`ldr.estimators._hsic_namespace`.

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        q, the subspace dimension (1 <= q < n_features); "auto" takes the largest eigengap;
        None the natural maximum n_features − 1 (module docstring).
    kernel : "gaussian" or an ISM-family kernel (:mod:`ldr.kernels`)
    sigma : float, optional
        Gaussian width; default the median pairwise distance of the standardized data.
    y_kernel : {"onehot", "linear", "gaussian"}
        K_Y = YYᵀ with one-hot labels (classification), or a linear / Gaussian kernel on
        standardized continuous targets.  A continuous y (scikit-learn's ``type_of_target``
        "continuous") with "onehot" is a ValueError that names the other two.
    solver : solver name, instance or chain; None (default) is the HSIC objective's default,
        ``["ism", "trust-region"]``: ISM's spectral iterations, then a second-order polish
        that certifies the point and repairs an ISM cycle
    start : "heuristic" (default: ISM's spectral start, the minimizing eigenvectors of Φ₀),
        "random" or an array (n_features, q): the W-step's start
    tol : relative gradient-norm tolerance of the W-step (``gtol`` of :func:`ldr.solve`)
    max_iter, solver_params : the W-step's budget (the default per stage; one set bounds
        the whole W-step, Hessian-vector products counted) and :func:`ldr.solve`'s options
    random_state : seed of random starts and of the random features (default 0; None: fresh
        entropy)
    block_size : rows per block of the W-step's kernel passes
    memory_budget : bytes for the W-step's b×n working arrays (default 256 MiB); the block
        size is chosen from it, so memory is O(n·(block + d)), never O(n²) (for class labels
        or ``y_kernel="linear"``; ``y_kernel="gaussian"`` forms a dense n×n Γ up to 2000
        samples, a Nyström factor with max(n_features, 256) landmarks beyond)
    backend : "numpy" (in-process block loop) or "dask" (blocks as Dask tasks on the current
        scheduler, e.g. a ``dask.distributed`` client)
    approximation : None (exact), "rff" (random Fourier features) or "nystroem" — the
        Gaussian kernel on XW approximated with ``n_features`` features / landmarks, seeded by
        ``random_state`` (0 when None); Φ in O(n·m·(d + q)) (for n ≳ 10⁵; see
        :class:`ldr.objectives.hsic.ApproximateHSIC`)
    n_features : m, the approximation's error knob (default 512)

    Attributes
    ----------
    M_ (n_features, q; ``W_`` is its deprecated alias), components_, n_components_,
    eigengap_, result_ (the W-step's :class:`ldr.Result`), classes_ (one-hot labels), mean_,
    scale_

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> Z = SupervisedHSIC(n_components=2).fit_transform(X, y)
    >>> Z.shape
    (178, 2)
    """

    def __init__(self, n_components=None, *, kernel="gaussian", sigma=None, y_kernel="onehot",
                 solver=None, start="heuristic", tol=1e-8, max_iter=500, solver_params=None,
                 random_state=0, block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET,
                 backend="numpy", approximation=None, n_features=512):
        self.n_components, self.kernel, self.sigma, self.y_kernel = (
            n_components, kernel, sigma, y_kernel)
        self.solver, self.start, self.tol, self.max_iter = solver, start, tol, max_iter
        self.solver_params = solver_params
        self.random_state, self.block_size = random_state, block_size
        self.memory_budget, self.backend = memory_budget, backend
        self.approximation, self.n_features = approximation, n_features

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _gamma(self, y, n):
        if self.y_kernel == "onehot":
            _refuse_continuous(y)
            self.classes_, Gamma = label_gamma(y, n)
            return Gamma
        if self.y_kernel not in ("linear", "gaussian"):
            raise ParameterError("y_kernel", f"expected 'onehot', 'linear' or 'gaussian', "
                                 f"got {self.y_kernel!r}")
        try:
            y = np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError("y", f"y_kernel={self.y_kernel!r} needs numeric responses; "
                                 "class labels take y_kernel='onehot'") from None
        if y.shape[0] != n:
            raise ParameterError("y", f"has {y.shape[0]} rows but X has {n} samples")
        Y = y.reshape(n, -1)
        if not np.all(np.isfinite(Y)):
            raise ParameterError("y", "contains NaN or infinity")
        sd = Y.std(axis=0)
        Y = (Y - Y.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        if self.y_kernel == "linear":
            return _center(Y), np.full(Y.shape[1], 1.0 / n**2)
        sigma = median_distance(Y) if n > 1 else 1.0  # y_kernel == "gaussian"
        if n > GAMMA_DENSE_MAX:  # a low-rank factor: never n×n (_spectral.gaussian_gamma)
            return gaussian_gamma(Y, sigma, max(self.n_features, 256), seed_of(self.random_state))
        KY = Gaussian(sigma).gram(Y, np.eye(Y.shape[1]))
        KY = KY - KY.mean(axis=0)
        return (KY - KY.mean(axis=1, keepdims=True)) / n**2

    def fit(self, X, y):
        if y is None:
            raise ParameterError("y", f"{type(self).__name__} requires y to be passed, but the "
                                      "target y is None: HSIC(XW, y) needs the targets")
        if (space := namespace_of(X)) is not None:  # array API input (_hsic_namespace)
            return fit_in(self, X, y, *space)
        X, dtype = self._validate_X(X)
        self._check_params(X)
        Xs = self._scale(X, fit=True)
        Gamma = self._gamma(y, X.shape[0])
        self.kernel_ = self._kernel(Xs)
        self._fit_w(Xs, Gamma)
        cast_fitted(self, dtype)
        return self


def _refuse_continuous(y) -> None:
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


class _ClusteringHSIC(NamespaceOutput, ClusterMixin, _HSICBase):
    """Alternation of W-steps and spectral U-steps (array API input: ``_namespace.on_host``)."""

    center_u = False

    def __sklearn_tags__(self):
        return preserve_float32(super().__sklearn_tags__())

    def _gamma(self, U, dm, n):  # pragma: no cover - abstract
        raise NotImplementedError

    def _alternate(self, Xs):
        return fit_alternation(self, Xs)  # W-steps and U-steps (ldr.estimators._hsic_rounds)

    def _spectral_start(self) -> bool:
        """Whether the W-step starts from ISM's spectral start (``start="heuristic"``)."""
        return isinstance(self.start, str) and self.start == "heuristic"

    def fit_predict(self, X, y=None, **kwargs):
        return self.fit(X, y, **kwargs).labels_


class UnsupervisedHSIC(_ClusteringHSIC):
    """Unsupervised HSIC dimension reduction with spectral clustering (Niu et al. 2011).

    Alternates W ← argmin −tr(H UUᵀ H K_XW) and U ← spectral embedding of K_XW, from U of the
    full-dimensional kernel.  ``labels_`` are k-means on the row-normalized U.

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        As :class:`SupervisedHSIC`.
    n_clusters : int, default 2
        Keyword-only (the first argument is ``n_components``, as in every estimator).
    kernel, sigma, solver, start, tol, max_iter, solver_params, random_state, block_size,
    memory_budget, backend, approximation, n_features : as SupervisedHSIC (the W-step's)
    spectral : {"auto", "exact", "nystroem"}, the U-step's embedding: the dense n×n kernel's,
        or Nyström's with ``n_features`` landmarks (n×m, never n×n); "auto": exact up to 4000
        samples (``ldr/estimators/_spectral.py``)
    max_outer : alternations at most (default 30);  outer_tol : stop when a round moves the
        embedding it started from by sin θ(U_k, U_k⁺) ≤ outer_tol (its fixed-point residual)
    acceleration : "anderson" (default; ``ldr.estimators._anderson``) or None (the plain
        alternation), with the same fixed points.  On bench_real's 14 tables the plain
        one converged (rate 0.4–0.9) within 20 rounds on 7; Anderson on all 14, in ≤ 12.
        With the default solver a round's W-step is one ISM step until the alternation
        settles, and the last rounds are exact (:mod:`ldr.estimators._hsic_rounds`): the
        same fixed points, ``result_`` the last exact W-step's.
    """

    def __init__(self, n_components=None, *, n_clusters=2, kernel="gaussian", sigma=None,
                 solver=None, start="heuristic", tol=1e-8, max_iter=500, solver_params=None,
                 max_outer=30, outer_tol=1e-6, acceleration="anderson", random_state=0,
                 block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET, backend="numpy",
                 approximation=None, n_features=512, spectral="auto"):
        self.n_clusters, self.n_components, self.kernel, self.sigma = (
            n_clusters, n_components, kernel, sigma)
        self.solver, self.start, self.tol, self.max_iter = solver, start, tol, max_iter
        self.solver_params = solver_params
        self.max_outer, self.outer_tol, self.acceleration = max_outer, outer_tol, acceleration
        self.random_state, self.block_size = random_state, block_size
        self.memory_budget, self.backend = memory_budget, backend
        self.approximation, self.n_features, self.spectral = (approximation, n_features,
                                                              spectral)

    def _gamma(self, U, dm, n):
        return _center(U), np.full(U.shape[1], 1.0 / n**2)

    def fit(self, X, y=None):
        space, X = on_host(X)  # array API input: fitted on the host (_namespace)
        X, self._dtype = self._validate_X(X)
        self._check_params(X)
        return answer_in(self._alternate(self._scale(X, fit=True)), space)


class SemiSupervisedHSIC(_ClusteringHSIC):
    """Semi-supervised HSIC dimension reduction (Chang et al. 2017).

    Given expert scores Ŷ (n × m), alternates W ← argmin −tr((Ω + μΨ) K_XW) with
    Ω = D^{-1/2}UUᵀD^{-1/2}, Ψ = H ŶŶᵀ H (linear kernel on standardized scores), and the
    spectral U-step.  ``mu`` weighs the experts against clustering quality.

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        As :class:`SupervisedHSIC`.
    n_clusters : int, default 2
        Keyword-only (the first argument is ``n_components``, as in every estimator).
    mu : float ≥ 0, default 1
        The weight μ of the experts' scores.
    kernel, sigma, solver, start, tol, max_iter, solver_params, max_outer, outer_tol,
    acceleration, random_state, block_size, memory_budget, backend, approximation, n_features,
    spectral : as UnsupervisedHSIC
    """

    def __init__(self, n_components=None, *, n_clusters=2, mu=1.0, kernel="gaussian",
                 sigma=None, solver=None, start="heuristic", tol=1e-8, max_iter=500,
                 solver_params=None, max_outer=30, outer_tol=1e-6, acceleration="anderson",
                 random_state=0, block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET,
                 backend="numpy", approximation=None, n_features=512, spectral="auto"):
        self.n_clusters, self.n_components, self.mu = n_clusters, n_components, mu
        self.kernel, self.sigma = kernel, sigma
        self.solver, self.start, self.tol, self.max_iter = solver, start, tol, max_iter
        self.solver_params = solver_params
        self.max_outer, self.outer_tol, self.acceleration = max_outer, outer_tol, acceleration
        self.random_state, self.block_size = random_state, block_size
        self.memory_budget, self.backend = memory_budget, backend
        self.approximation, self.n_features, self.spectral = (approximation, n_features,
                                                              spectral)

    def _gamma(self, U, dm, n):
        F = np.column_stack([dm[:, None] * U, self._scores])
        s = np.concatenate([np.ones(U.shape[1]), np.full(self._scores.shape[1], self.mu)])
        return F, s / n**2

    def fit(self, X, y):
        """``y``: expert scores, (n,) or (n, m), or class labels (one-hot encoded)."""
        space, X, y = on_host(X, y)
        X, self._dtype = self._validate_X(X)
        self._check_params(X)
        if not (np.isscalar(self.mu) and self.mu >= 0):
            raise ParameterError("mu", f"must be a non-negative number, got {self.mu!r}")
        n, Y = X.shape[0], np.asarray(y)
        if Y.shape[0] != n:
            raise ParameterError("y", f"has {Y.shape[0]} rows but X has {n} samples")
        if Y.dtype.kind in "OUSb" or Y.ndim == 1 and Y.dtype.kind in "iu":
            Y = _onehot(Y, n)[1]
        Y = np.asarray(Y, dtype=float).reshape(n, -1)
        if not np.all(np.isfinite(Y)):
            raise ParameterError("y", "contains NaN or infinity")
        sd = Y.std(axis=0)
        self._scores = _center(Y / np.where(sd > 0, sd, 1.0))
        return answer_in(self._alternate(self._scale(X, fit=True)), space)


class KDAC(_ClusteringHSIC):
    """Kernel dimension alternative clustering (Wu et al.): a clustering unlike a given one.

    Maximizes HSIC(XW, U) − λ HSIC(XW, Y) with the normalized kernel D^{-1/2}K_XW D^{-1/2}:
    Γ = D^{-1/2}H(UUᵀ − λYYᵀ)HD^{-1/2}, Y the one-hot existing labels.  The U-step is the top-k
    eigenvectors of H D^{-1/2}K_XW D^{-1/2} H; ``labels_`` are k-means on U.

    Parameters
    ----------
    n_components : int, "auto" or None, default None
        As :class:`SupervisedHSIC`.
    n_clusters : int, default 2
        Keyword-only (the first argument is ``n_components``, as in every estimator).
    lam : float ≥ 0, the weight λ of novelty against the existing clustering (default 0.5;
        on the moon data 0.5 recovers either view from the other for every seed tried, 1.0
        not always)
    kernel, sigma, solver, start, tol, max_iter, solver_params, max_outer, outer_tol,
    acceleration, random_state, block_size, memory_budget, backend, approximation, n_features,
    spectral : as UnsupervisedHSIC
    """

    center_u = True

    def __init__(self, n_components=None, *, n_clusters=2, lam=0.5, kernel="gaussian",
                 sigma=None, solver=None, start="heuristic", tol=1e-8, max_iter=500,
                 solver_params=None, max_outer=30, outer_tol=1e-6, acceleration="anderson",
                 random_state=0, block_size=None, memory_budget=DEFAULT_MEMORY_BUDGET,
                 backend="numpy", approximation=None, n_features=512, spectral="auto"):
        self.n_clusters, self.n_components, self.lam = n_clusters, n_components, lam
        self.kernel, self.sigma = kernel, sigma
        self.solver, self.start, self.tol, self.max_iter = solver, start, tol, max_iter
        self.solver_params = solver_params
        self.max_outer, self.outer_tol, self.acceleration = max_outer, outer_tol, acceleration
        self.random_state, self.block_size = random_state, block_size
        self.memory_budget, self.backend = memory_budget, backend
        self.approximation, self.n_features, self.spectral = (approximation, n_features,
                                                              spectral)

    def _gamma(self, U, dm, n):
        F = dm[:, None] * _center(np.column_stack([U, self._existing]))
        s = np.concatenate([np.ones(U.shape[1]), np.full(self._existing.shape[1], -self.lam)])
        return F, s / n**2

    def fit(self, X, y):
        """``y``: the existing clustering's labels, which the new clustering should avoid."""
        space, X, y = on_host(X, y)
        X, self._dtype = self._validate_X(X)
        self._check_params(X)
        if not (np.isscalar(self.lam) and self.lam >= 0):
            raise ParameterError("lam", f"must be a non-negative number, got {self.lam!r}")
        self.existing_classes_, self._existing = _onehot(y, X.shape[0])
        return answer_in(self._alternate(self._scale(X, fit=True)), space)
