"""Latent-variable Gaussian models by maximum likelihood: probabilistic PCA and factor
analysis."""

from __future__ import annotations

import numpy as np
import scipy.stats
from sklearn.utils.validation import check_is_fitted

from ldr.estimators._base import LinearDR
from ldr.estimators._output import validate_data
from ldr.objectives.latent import PPCA as PPCAObjective
from ldr.objectives.latent import FactorAnalysis as FactorAnalysisObjective

__all__ = ["FactorAnalysis", "PPCA"]


class _LatentGaussian(LinearDR):
    """PPCA and FA: loadings W (not orthonormal), posterior-mean transform, likelihood score."""

    def _finalize(self, obj, M, data):
        # the likelihood is invariant to W → WR: keep the basis with orthogonal columns of
        # decreasing norm (W's right singular vectors), largest entry of each positive
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

    def _components(self, obj, M):
        return obj.unpack(M)[0].T

    def score_samples(self, X) -> np.ndarray:
        """Log-likelihood of each row of X under the fitted Gaussian ``N(mean_, WWᵀ + Ψ)``."""
        check_is_fitted(self, "M_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        C = self.objective_.covariance(self.M_)
        return scipy.stats.multivariate_normal(self.mean_, C, allow_singular=False).logpdf(
            X).reshape(-1)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the rows of X (scikit-learn's PCA/FactorAnalysis ``score``)."""
        return float(np.mean(self.score_samples(X)))


class PPCA(_LatentGaussian):
    """Probabilistic PCA by maximum likelihood, x ~ N(μ, WWᵀ + σ²I) (survey Eq. 22).

    The closed form (Tipping & Bishop) is the default start and already optimal, so the run
    certifies it; ``transform`` is the posterior mean E[z | x].

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: the largest q that leaves a noise variance to
        estimate — n_features − 1, or k − 1 on data of numerical rank k < n_features
        (:meth:`ldr.objectives.PPCA.max_rank`).
    noise_variance : float > 0, optional
        A fixed σ²; estimated when None (default).
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
    n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

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

    def __init__(self, n_components=None, *, noise_variance=None, solver=None,
                 start=None, tol=1e-8, max_iter=1000,
                 solver_params=None, random_state=0):
        self.n_components, self.noise_variance = n_components, noise_variance
        self.solver, self.start = solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state


class FactorAnalysis(_LatentGaussian):
    """Factor analysis by maximum likelihood, x ~ N(μ, WWᵀ + Ψ), Ψ diagonal (survey Eq. 23).

    Starts at PPCA's closed form (ψ_j = σ²), which FA contains, so the answer is never less
    likely; ``transform`` is the posterior mean E[z | x].

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (ldr's model
        needs q < n_features).
    solver, start, tol, max_iter, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : the point (W, log ψ)
    components_ : (n_components, n_features)
        The loadings Wᵀ, as scikit-learn's FactorAnalysis (columns of W orthogonal here).
    noise_variance_ : (n_features,)
        ψ, the per-feature noise variances.
    log_likelihood_ : float
        Mean log-likelihood per training sample (−cost_).
    n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

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

    def __init__(self, n_components=None, *, solver=None, start=None,
                 tol=1e-8, max_iter=1000,
                 solver_params=None, random_state=0):
        self.n_components, self.solver, self.start = n_components, solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state
