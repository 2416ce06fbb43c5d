"""Gaussian models behind the scikit-learn parity of :class:`~ldr.estimators.PCA` and
:class:`~ldr.estimators.OrthogonalLDA`: Minka's choice of the PCA dimension, the
probabilistic-PCA covariance and precision, and the shared-covariance Gaussian classifier.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.special

from ldr.core.errors import ParameterError


# --- PCA ----------------------------------------------------------------------------------------
def minka_log_likelihood(spectrum: np.ndarray, rank: int, n_samples: int) -> float:
    """Minka's Laplace approximation of the evidence of a rank-``rank`` PCA model (Minka,
    *Automatic choice of dimensionality for PCA*, NIPS 2000, Eq. 30–31; the form used by
    scikit-learn's ``n_components="mle"``).

    ``spectrum`` holds the covariance eigenvalues λ₁ ≥ … ≥ λ_d (d = n_features), 1 <= rank < d.
    With v = Σ_{j>k} λ_j/(d − k) and m = dk − k(k+1)/2 (k = rank),

        log p(D | k) ≈ log p(U) − (n/2) Σ_{j≤k} log λ_j − (n(d−k)/2) log v
                       + ((m + k)/2) log 2π − ½ log|A_Z| − (k/2) log n,

    p(U) = 2^{−k} Π_{i≤k} Γ((d−i+1)/2) π^{−(d−i+1)/2} and log|A_Z| = Σ_{i≤k} Σ_{j>i}
    [log((λ_i − λ_j)(1/λ̃_j − 1/λ̃_i)) + log n], λ̃_j = λ_j for j ≤ k and v beyond.
    A rank whose last eigenvalue is below 1e-15 gets −∞ (it cannot be the maximum).
    """
    lam = np.asarray(spectrum, dtype=float)
    d = lam.shape[0]
    k = int(rank)
    if not 1 <= k < d:
        raise ParameterError("rank", f"must be in [1, n_features - 1] = [1, {d - 1}], got {rank}")
    eps = 1e-15
    if lam[k - 1] < eps:
        return -np.inf
    i = np.arange(1, k + 1)
    pu = -k * np.log(2.0) + np.sum(scipy.special.gammaln((d - i + 1) / 2.0)
                                   - np.log(np.pi) * (d - i + 1) / 2.0)
    pl = -np.sum(np.log(lam[:k])) * n_samples / 2.0
    v = max(eps, float(np.sum(lam[k:])) / (d - k))
    pv = -np.log(v) * n_samples * (d - k) / 2.0
    m = d * k - k * (k + 1.0) / 2.0
    pp = np.log(2.0 * np.pi) * (m + k) / 2.0
    tilde = lam.copy()
    tilde[k:] = v
    ii, jj = np.triu_indices(d, k=1)
    keep = ii < k
    ii, jj = ii[keep], jj[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = np.sum(np.log((lam[ii] - lam[jj]) * (1.0 / tilde[jj] - 1.0 / tilde[ii]))
                    + np.log(n_samples))
    return float(pu + pl + pv + pp - pa / 2.0 - k * np.log(n_samples) / 2.0)


def minka_dimension(spectrum: np.ndarray, n_samples: int) -> int:
    """The rank in [1, d − 1] that maximizes :func:`minka_log_likelihood`."""
    d = len(spectrum)
    if d < 2:
        raise ParameterError("n_components", "'mle' needs at least two features (it chooses a "
                         "rank in [1, n_features - 1])")
    ll = [minka_log_likelihood(spectrum, k, n_samples) for k in range(1, d)]
    return int(np.argmax(ll)) + 1


def ppca_covariance(components: np.ndarray, variances: np.ndarray, noise: float) -> np.ndarray:
    """C = Vᵀ diag(max(λ − σ², 0)) V + σ² I, the probabilistic-PCA covariance of the data
    (Tipping & Bishop 1999, Eq. 7 at the maximum likelihood, rows of V the components)."""
    gap = np.where(variances > noise, variances - noise, 0.0)
    C = (components.T * gap) @ components
    C.flat[:: len(C) + 1] += noise
    return C


def ppca_singular(components: np.ndarray, variances: np.ndarray, noise: float) -> bool:
    """Whether the probabilistic-PCA covariance is singular: σ² = 0 while the components do
    not span the space with positive variances (rank-deficient data)."""
    return noise <= 0.0 and (components.shape[0] < components.shape[1]
                             or bool(np.any(variances <= 0.0)))


def ppca_precision(components: np.ndarray, variances: np.ndarray, noise: float) -> np.ndarray:
    """C⁻¹ by the matrix inversion lemma (σ² > 0): σ⁻² I − σ⁻⁴ Vᵀ (V Vᵀ/σ² + D⁻¹)⁻¹ V,
    D = diag(λ − σ²); a plain inverse when σ² = 0 (all components kept).  A singular C
    (:func:`ppca_singular`) is a ValueError."""
    if ppca_singular(components, variances, noise):
        raise ValueError("the fitted covariance is singular (noise_variance_ = 0 and the "
                         "data's rank is below n_features): it has no inverse; keep fewer "
                         "components than the data's rank")
    if noise == 0.0:
        return scipy.linalg.inv(ppca_covariance(components, variances, noise))
    gap = np.where(variances > noise, variances - noise, 0.0)
    with np.errstate(divide="ignore"):
        inner = components @ components.T / noise
        inner.flat[:: len(inner) + 1] += 1.0 / gap
    P = -(components.T @ scipy.linalg.inv(inner) @ components) / noise**2
    P.flat[:: len(P) + 1] += 1.0 / noise
    return P


# --- the shared-covariance Gaussian classifier ------------------------------------------------
def check_priors(priors, n_classes: int) -> np.ndarray:
    """Class priors: ``n_classes`` non-negative numbers that sum to 1."""
    p = np.asarray(priors, dtype=float).reshape(-1)
    if p.shape[0] != n_classes:
        raise ParameterError("priors", f"expected {n_classes} values (one per class), got "
                         f"{p.shape[0]}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ParameterError("priors", f"must be non-negative and finite, got {p.tolist()}")
    if abs(p.sum() - 1.0) > 1e-8:
        raise ParameterError(
            "priors", f"must sum to 1, got a sum of {p.sum():.10g}; divide them by "
                         "their sum")
    return p


def gaussian_linear_rule(M: np.ndarray, mean: np.ndarray, class_means: np.ndarray,
                         Sw: np.ndarray, priors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(coef, intercept)`` of the shared-covariance Gaussian model in the projected space.

    With z = Mᵀ(x − mean), class means m_k = Mᵀ(μ_k − mean), covariance Σ = MᵀS_wM and priors
    π_k, the log-posterior is, up to a term common to all classes,

        δ_k(x) = zᵀΣ⁻¹m_k − ½ m_kᵀΣ⁻¹m_k + log π_k = xᵀ coef_k + intercept_k,

    coef_k = MΣ⁻¹m_k and intercept_k = δ_k(0) (a zero prior gives −∞).  The common term
    depends on ``mean``; scikit-learn's LDA centers at x̄ = Σ_k π_k μ_k, and so does
    :class:`~ldr.estimators.OrthogonalLDA`, so that its ``decision_function`` is the same
    function, not only the same posterior.
    """
    P = (class_means - mean) @ M                       # (C, r) projected class means
    L = scipy.linalg.cho_factor(M.T @ Sw @ M)
    W = scipy.linalg.cho_solve(L, P.T)                 # Σ⁻¹ m_k as columns (r, C)
    with np.errstate(divide="ignore"):
        intercept = -0.5 * np.sum(P.T * W, axis=0) + np.log(priors)
    coef = (M @ W).T                                   # (C, d)
    return coef, intercept - coef @ mean
