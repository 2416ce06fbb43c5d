"""Latent-variable Gaussian models by maximum likelihood: probabilistic PCA and factor
analysis."""

from __future__ import annotations

import numpy as np
import scipy.stats

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import moments
from ldr.estimators.base import AffineMap, FitData, LinearDR
from ldr.objectives.latent import PPCA as PPCAObjective
from ldr.objectives.latent import FactorAnalysis as FactorAnalysisObjective

__all__ = ["FactorAnalysis", "PPCA"]


class LatentGaussian(LinearDR):
    """What PPCA and FA share: the model is fitted on the rows' covariance (one pass, in
    their namespace or over the chunks of a Dask array or memmap); loadings W with orthogonal
    columns of decreasing norm; a posterior-mean ``transform``; the likelihood ``score``."""

    _computes_in_namespace = True

    def _prepare(self, data: FitData) -> None:
        data.stats = moments(data.X, name="X", validated=True).on_host()
        data.X = data.stats

    def _finish(self, data: FitData, obj, result):
        # the likelihood is invariant to W → WR: keep the basis with orthogonal columns of
        # decreasing norm (W's right singular vectors), largest entry of each positive
        M = result.M
        W = np.asarray(M[0] if isinstance(M, tuple) else M, dtype=float)
        _, _, Vt = np.linalg.svd(W, full_matrices=False)
        W = W @ Vt.T
        rows = np.argmax(np.abs(W), axis=0)
        signs = np.sign(W[rows, np.arange(W.shape[1])])
        W = W * np.where(signs == 0, 1.0, signs)
        M = (W, *M[1:]) if isinstance(M, tuple) else W
        self.noise_variance_ = obj.unpack(M)[1]
        self.log_likelihood_ = obj.log_likelihood(M)
        return M

    def _components(self, data: FitData, obj, M):
        W = obj.unpack(M)[0]
        return (W if data.basis is None else data.basis @ W).T

    def score_samples(self, X):
        """Log-likelihood of each row of X under the fitted Gaussian ``N(mean_, WWᵀ + Ψ)``
        (computed on the host; in X's namespace under ``array_api_dispatch``)."""
        X = self._check_rows(X, "score_samples")
        out = self._log_density(np.asarray(arrays.to_host(X), dtype=float))
        return out if arrays.foreign(X) is None else arrays.like(out, X)

    def _log_density(self, X):
        C = self.objective_.covariance(self.result_model())
        mean = np.asarray(arrays.to_host(self.mean_), dtype=float)
        return scipy.stats.multivariate_normal(mean, C, allow_singular=False).logpdf(
            X).reshape(-1)

    def result_model(self):
        """The fitted point in the objective's coordinates (NumPy)."""
        M = self.M_
        return tuple(arrays.to_host(m) for m in M) if isinstance(M, tuple) \
            else arrays.to_host(M)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the rows of X (scikit-learn's PCA/FactorAnalysis
        ``score``)."""
        return float(np.mean(arrays.to_host(self.score_samples(X))))


class PPCA(LatentGaussian):
    """Probabilistic PCA by maximum likelihood, x ~ N(μ, WWᵀ + σ²I) (survey Eq. 22).

    The closed form (Tipping & Bishop) is the default start and already optimal, so the run
    certifies it.  With S = U Λ Uᵀ the covariance (eigenvalues λ_1 ≥ … ≥ λ_d), the maximum has
    W = U_r (Λ_r − σ²I)^{1/2} R (any orthogonal R; the fitted W has orthogonal columns of
    decreasing norm, R = I) and σ² = mean(λ_{r+1}, …, λ_d).  ``transform`` is chosen by
    ``transform_algorithm`` (the name of scikit-learn's ``SparseCoder``/``DictionaryLearning``
    parameter that picks what ``transform`` computes):

    * ``"projection"`` (default): the orthogonal projection onto the principal subspace, ::

          z = U_rᵀ (x − μ),                                                   (1)

      with U_r = W (WᵀW)^{-1/2} (W's columns scaled to unit norm): scikit-learn's
      ``PCA(n_components).transform``, whose model is this one (its ``score`` is PPCA's
      likelihood), with the same signs (largest entry of each column positive);
    * ``"posterior_mean"``: the posterior mean of the latent variable, ::

          E[z | x] = (WᵀW + σ²I)⁻¹ Wᵀ (x − μ) = diag(√(λ_i − σ²) / λ_i) U_rᵀ (x − μ),   (2)

      which shrinks each principal coordinate by √(λ_i − σ²)/λ_i ≈ λ_i^{-1/2}: it nearly
      whitens them, as scikit-learn's ``FactorAnalysis.transform`` does for its model.

    (1) is the default because it is what a user of scikit-learn's PCA, whose model this
    is, gets from ``transform``; (2) weighs the noise-level components nearly as much as the
    leading ones.  A column of W that is zero (a fixed ``noise_variance`` ≥ λ_i) maps to
    zero under both.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: the largest q that leaves a noise variance to
        estimate — n_features − 1, or k − 1 on data of numerical rank k < n_features
        (:meth:`ldr.objectives.PPCA.max_rank`).
    noise_variance : float > 0, optional
        A fixed σ²; estimated when None (default).
    transform_algorithm : {"projection", "posterior_mean"}, default "projection"
        What ``transform`` returns: the projection (1) or the posterior mean (2).
    solver, start, tol, max_iter, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : the point: W, or (W, [[log σ²]]) when σ² is estimated
    components_ : (n_components, n_features)
        The loadings Wᵀ (not orthonormal; columns of W orthogonal, by decreasing norm).
    noise_variance_ : float
        σ².
    log_likelihood_ : float
        Mean log-likelihood per training sample (−cost_).
    map_, n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import PCA as SkPCA
    >>> X = np.random.default_rng(0).standard_normal((200, 5)) * [5.0, 4.0, 1.0, 1.0, 1.0]
    >>> est = PPCA(n_components=2).fit(X)
    >>> bool(abs(est.score(X) - SkPCA(2).fit(X).score(X)) < 1e-3)
    True
    """

    _objective_class = PPCAObjective
    _objective_args = ("noise_variance",)
    #: the values of ``transform_algorithm``
    transform_algorithms = ("projection", "posterior_mean")

    def __init__(self, n_components=None, *, noise_variance=None,
                 transform_algorithm="projection", solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, random_state=0):
        self.n_components = n_components
        self.noise_variance = noise_variance
        self.transform_algorithm = transform_algorithm
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.random_state = random_state

    def _prepare(self, data: FitData) -> None:
        if self.transform_algorithm not in self.transform_algorithms:
            raise ParameterError("transform_algorithm", "must be 'projection' (scikit-learn "
                                 "PCA's transform, U_rᵀ(x − μ)) or 'posterior_mean' (E[z | x]);"
                                 f" got {self.transform_algorithm!r}")
        super()._prepare(data)

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        mean, A = obj.linear_map(M)  # the posterior mean's map, Eq. (2)
        if self.transform_algorithm == "projection":
            W = obj.unpack(M)[0]
            norms = np.linalg.norm(W, axis=0)
            # Eq. (1): W's columns are orthogonal (``_finish``), so W / ‖w_i‖ is U_r; a zero
            # column (σ² ≥ λ_i with a fixed noise variance) maps to zero, as in Eq. (2)
            A = W / np.where(norms > 0, norms, np.inf)
        return AffineMap(np.asarray(mean, dtype=float), np.asarray(A, dtype=float))


class FactorAnalysis(LatentGaussian):
    """Factor analysis by maximum likelihood, x ~ N(μ, WWᵀ + Ψ), Ψ diagonal (survey Eq. 23).

    Starts at PPCA's closed form (ψ_j = σ²), which FA contains, so the answer is never less
    likely; ``transform`` is the posterior mean E[z | x].

    **Constant features** (a pixel that is always 0, a dummy constant in a cross-validation
    fold): their maximum-likelihood noise variance is 0 and the likelihood unbounded, so the
    objective (:class:`ldr.objectives.FactorAnalysis`) refuses them.  The estimator fits the
    model on the other features and gives each constant feature a zero loading and the noise
    variance ``noise_floor`` (1e-12, scikit-learn's floor on ψ, which its FactorAnalysis
    reaches there): the model's covariance is block diagonal, so this is the maximum of the
    likelihood with ψ floored, and ``log_likelihood_`` and ``score`` include the constant
    features' terms, as scikit-learn's do.  ``constant_features_`` lists them.

    **The default rank** is n_features − 1 (scikit-learn's is n_features).  At r =
    n_features the model WWᵀ + Ψ can equal any covariance: the likelihood's maximum, the
    full-covariance Gaussian's −½(d log 2π + log det S + d), is attained by every Ψ with
    0 < Ψ and S − Ψ positive semi-definite, so the factors and ``transform`` would be
    wherever a solver stops; the objective refuses r = d.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (ldr's model
        needs q < n_features).  With k constant features: n_features − k − 1 and at most
        that.
    solver, start, tol, max_iter, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : the point (W, log ψ)
    components_ : (n_components, n_features)
        The loadings Wᵀ, as scikit-learn's FactorAnalysis (columns of W orthogonal here).
    noise_variance_ : (n_features,)
        ψ, the per-feature noise variances (``noise_floor`` for a constant feature).
    log_likelihood_ : float
        Mean log-likelihood per training sample (−cost_ without constant features).
    constant_features_ : (k,) int array
        The indices of the constant features (empty when there are none).  With k > 0,
        ``M_``, ``objective_``, ``result_`` and ``cost_`` are the model of the other features.
    map_, n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 6)) * 2
    >>> X += rng.standard_normal((300, 6)) * [0.5, 1.0, 1.5, 0.5, 1.0, 2.0]
    >>> est = FactorAnalysis(n_components=2).fit(X)
    >>> bool(est.log_likelihood_ > PPCA(n_components=2).fit(X).log_likelihood_)
    True
    """

    _objective_class = FactorAnalysisObjective
    #: the noise variance of a constant feature: scikit-learn's floor on ψ (its ``SMALL``)
    noise_floor = 1e-12

    def __init__(self, n_components=None, *, solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, random_state=0):
        self.n_components = n_components
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.random_state = random_state

    def _prepare(self, data: FitData) -> None:
        """The covariance of the features that vary; constant features are set aside (the
        class docstring) — found from each column's range where the rows are in memory (a
        chunked read leaves them to the objective's own check, which names them)."""
        self.constant_features_ = np.zeros(0, dtype=np.intp)
        rows = None if data.lazy else data.X
        super()._prepare(data)
        if rows is None:
            return
        xp = arrays.namespace(rows)
        spread = np.asarray(arrays.to_host(xp.max(rows, axis=0) - xp.min(rows, axis=0)))
        scale = np.asarray(arrays.to_host(xp.max(xp.abs(rows), axis=0)))
        const = np.flatnonzero(spread <= 4 * np.finfo(float).eps * scale)
        d = spread.shape[0]
        if const.size == 0:
            return
        if d - const.size < 2:
            raise ParameterError("X", f"{const.size} of its {d} features are constant "
                                 f"({const.tolist()}): factor analysis needs at least two "
                                 "features that vary")
        stats = data.stats
        kept = np.setdiff1d(np.arange(d), const)
        self.constant_features_ = const
        data.derived["constant"] = (const, stats.mean[const], np.diag(stats.covariance())[const])
        data.basis = np.eye(d)[:, kept]
        data.mean = np.asarray(stats.mean)
        data.X = stats.project(data.basis)  # the statistics of the other features, exactly

    def _n_components(self, data: FitData) -> int:
        const = self.constant_features_
        if const.size == 0:
            return super()._n_components(data)
        k = data.n_features
        q = k - 1 if self.n_components is None else self.n_components
        if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or not 1 <= q < k:
            raise ParameterError("n_components", f"must be an integer with 1 <= n_components "
                                 f"< {k}: {const.size} features are constant "
                                 f"({const.tolist()}) and the model is fitted on the other "
                                 f"{k}; got {self.n_components!r}")
        return int(q)

    def _finish(self, data: FitData, obj, result):
        M = super()._finish(data, obj, result)
        if "constant" not in data.derived:
            return M
        # back to all features: ψ at the floor, the constants' likelihood terms added
        const, _, var_c = data.derived["constant"]
        psi = np.full(self.n_features_in_, self.noise_floor)
        psi[np.setdiff1d(np.arange(self.n_features_in_), const)] = self.noise_variance_
        self.noise_variance_ = psi
        self.log_likelihood_ = float(self.log_likelihood_ + np.sum(
            -0.5 * (np.log(2 * np.pi * self.noise_floor) + var_c / self.noise_floor)))
        return M

    def _log_density(self, X):
        const = np.asarray(arrays.to_host(self.constant_features_))
        if const.size == 0:
            return super()._log_density(X)
        kept = np.setdiff1d(np.arange(self.n_features_in_), const)
        C = self.objective_.covariance(self.result_model())
        mean = np.asarray(arrays.to_host(self.mean_), dtype=float)
        out = scipy.stats.multivariate_normal(mean[kept], C).logpdf(X[:, kept]).reshape(-1)
        dev = (X[:, const] - mean[const]) ** 2
        return out - 0.5 * np.sum(np.log(2 * np.pi * self.noise_floor)
                                  + dev / self.noise_floor, axis=1)
