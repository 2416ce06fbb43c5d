"""The Gaussian latent-variable model shared by :class:`~ldr.objectives.PPCA` and
:class:`~ldr.objectives.FactorAnalysis`: x ~ N(μ, WWᵀ + diag(ψ)), its negative mean
log-likelihood, Woodbury factors, gradient and Hessian-vector products in the model's own
units (:mod:`ldr.objectives.latent` documents the formulas and their references)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ldr.data import arrays
from ldr.data.validation import check_new_data
from ldr.errors import ParameterError
from ldr.objective import Objective

_LOG_2PI = float(np.log(2.0 * np.pi))


def check_samples(n: int, r: int, method: str) -> None:
    """Raise a ParameterError naming X when n < r + 2 samples: the sample covariance (rank at
    most n − 1) must exceed rank r, or the noise variance goes to 0 and the likelihood is
    unbounded."""
    if n < r + 2:
        raise ParameterError("X",
            f"{method} with r={r} needs at least r + 2 = {r + 2} samples (the sample "
            f"covariance has rank ≤ n − 1 and must exceed r, or the noise variance goes to 0 "
            f"and the likelihood is unbounded); got {n}"
        )


def _key(*arrays) -> bytes:
    return b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in arrays)


_POTRF, _POTRS = scipy.linalg.get_lapack_funcs(("potrf", "potrs"), (np.zeros((1, 1)),))


def _cho_inverse(A: np.ndarray) -> np.ndarray:
    """A⁻¹ of a small symmetric positive definite float64 matrix: ``scipy.linalg.cho_solve(
    cho_factor(A), I)``'s LAPACK calls (dpotrf, dpotrs) with its checks, without its
    wrappers' overhead (the fixed cost per fit).  A LinAlgError where A is not numerically
    positive definite, as ``cho_factor``."""
    # the fixed cost per fit: benchmarks/bench_real.py --no-cv
    A = np.asarray_chkfinite(A)
    c, info = _POTRF(A, lower=False, overwrite_a=False, clean=False)
    if info > 0:
        raise np.linalg.LinAlgError(
            f"{info}-th leading minor of the array is not positive definite")
    if info < 0:
        raise ValueError(f"LAPACK reported an illegal value in {-info}-th argument on entry "
                         "to POTRF")
    x, info = _POTRS(c, np.eye(A.shape[0]), lower=False, overwrite_b=False)
    if info != 0:
        raise ValueError(f"illegal value in {-info}th argument of internal potrs")
    return x


class LatentGaussian(Objective):
    """Shared core: negative mean log-likelihood of x ~ N(μ, WWᵀ + diag(ψ)).

    Subclasses set ``self.S`` (biased covariance), ``self.mean_``, ``shape``, ``manifold`` and
    map their point M to ``(W, ℓ)`` with ℓ = log ψ a length-d vector.
    """

    S: np.ndarray
    mean_: np.ndarray


    def _init_data(self, stats) -> None:
        self.n_samples_ = stats.n
        self.mean_ = stats.mean
        self.S = stats.covariance()
        # the unit of M (module docstring): loadings in units of c, log-variances minus 2 log c;
        # the model is evaluated in these units (S/c²), so that data at 1e-90 or 1e90 neither
        # underflow nor overflow (Ψ⁻² would be 1e364 at 1e-91)
        self.unit_ = float(np.sqrt(max(np.trace(self.S) / self.S.shape[0],
                                       np.finfo(float).tiny)))
        self._log_unit2 = 2.0 * np.log(self.unit_)
        evals, evecs = scipy.linalg.eigh(self.S / self.unit_**2)
        self.eigenvalues_ = np.maximum(evals[::-1], 0.0) * self.unit_**2  # decreasing
        self._set_units(np.full(self.S.shape[0], self.unit_))
        self._evecs = evecs[:, ::-1]
        self._cache_key: bytes | None = None
        self._cache: dict = {}

    def _set_units(self, u: np.ndarray) -> None:
        """Evaluate the model in units u (one per feature): S_jk/(u_j u_k), loadings W_j/u_j,
        log-variances ℓ_j − 2 log u_j (PPCA: u = c for every feature; FA: each feature's
        standard deviation)."""
        self._u = np.asarray(u, dtype=float)
        self._log_u2 = 2.0 * np.log(self._u)
        self._S_unit = self.S / np.outer(self._u, self._u)
        self._diag_S = np.diag(self._S_unit).copy()

    # --- the model in terms of (W, ℓ), in units u (S/uuᵀ, W/u, ℓ − 2 log u) -------------------
    def _cost_wl(self, W, ell):
        """The cost at (W, ℓ); +inf where I + WᵀΨ⁻¹W is numerically singular (a trial point
        far into a Heywood case, ψ_j → 0): a rejected trial for the solver, not an error."""
        try:
            return self._cost_wl_raw(W, ell)
        except np.linalg.LinAlgError:
            return np.inf

    def _cost_wl_raw(self, W, ell):
        d, r = W.shape
        # NumPy itself at plain arrays (autograd's wrappers call the same functions at a few
        # µs each: the fixed cost per fit, benchmarks/bench_real.py --no-cv), autograd where
        # it traces the cost
        xp = arrays.namespace(W, ell)
        psi = xp.exp(ell)
        L = W / psi[:, None]
        Kinv = xp.eye(r) + xp.dot(W.T, L)
        _, logdet_k = xp.linalg.slogdet(Kinv)
        trace = xp.sum(self._diag_S / psi) - xp.trace(
            xp.linalg.solve(Kinv, xp.dot(L.T, xp.dot(self._S_unit, L))))
        # + Σ log u_j: the cost in the units of the data (Σℓ counts 2 log u_j per feature)
        return 0.5 * (d * _LOG_2PI + xp.sum(ell) + logdet_k + trace + np.sum(self._log_u2))

    def _factors(self, W: np.ndarray, ell: np.ndarray) -> dict:
        """Woodbury factors at (W, ℓ), cached (gradient and Hessian come at one point)."""
        key = _key(W, ell)
        if key == self._cache_key:
            return self._cache
        psi = np.exp(ell)
        D = 1.0 / psi
        L = W * D[:, None]
        Kinv = np.eye(W.shape[1]) + W.T @ L
        try:
            K = _cho_inverse(Kinv)
        except np.linalg.LinAlgError:  # K⁻¹ = I + WᵀΨ⁻¹W ⪰ I, lost to rounding (ψ_j → 0)
            w, Q = scipy.linalg.eigh(0.5 * (Kinv + Kinv.T))
            K = (Q / np.maximum(w, 1.0)) @ Q.T
        Y = L @ K  # P W
        SY = self._S_unit @ Y
        PSY = D[:, None] * SY - Y @ (L.T @ SY)  # P S P W
        diag_P = D - np.sum(Y * L, axis=1)
        # diag(PSP) = D² diag(S) − 2 D ⊙ rowsum(SY ⊙ L) + rowsum(L (YᵀSY) ⊙ L)
        diag_Q = (D**2 * self._diag_S - 2.0 * D * np.sum(SY * L, axis=1)
                  + np.sum((L @ (Y.T @ SY)) * L, axis=1))
        self._cache_key = key
        self._cache = {"psi": psi, "D": D, "L": L, "K": K, "Y": Y, "Z": PSY,
                       "diag_A": diag_P - diag_Q}
        return self._cache

    def _grad_wl(self, W, ell) -> tuple[np.ndarray, np.ndarray]:
        F = self._factors(W, ell)
        return F["Y"] - F["Z"], 0.5 * F["psi"] * F["diag_A"]

    def _hvp_wl(self, W, ell, V, eta) -> tuple[np.ndarray, np.ndarray]:
        F = self._factors(W, ell)
        if "P" not in F:  # O(d³) once per point, then O(d²r) per product
            P = np.diag(F["D"]) - F["Y"] @ F["L"].T
            P = 0.5 * (P + P.T)
            Q = P @ self._S_unit @ P
            F["P"], F["Q"] = P, 0.5 * (Q + Q.T)
        P, Q, Y, Z, psi = F["P"], F["Q"], F["Y"], F["Z"], F["psi"]
        dpsi = psi * eta

        def delta(X):  # Δ X with Δ = VWᵀ + WVᵀ + diag(δψ)
            return V @ (W.T @ X) + W @ (V.T @ X) + dpsi[:, None] * X

        DY = delta(Y)
        PV, QV = P @ V, Q @ V
        hW = -P @ DY + P @ delta(Z) + Q @ DY + PV - QV
        diag_PdP = 2.0 * np.sum(PV * Y, axis=1) + (P * P) @ dpsi
        diag_PdQ = np.sum(PV * Z, axis=1) + np.sum(Y * QV, axis=1) + (P * Q) @ dpsi
        h_ell = 0.5 * (dpsi * F["diag_A"] + psi * (2.0 * diag_PdQ - diag_PdP))
        return hW, h_ell

    def _posterior(self, X, W, ell) -> np.ndarray:
        """E[z | x] for (W, ℓ) in the units of the data."""
        X = check_new_data(X, self.S.shape[0])
        return (X - self.mean_) @ self._posterior_map(W, ell)

    def _posterior_map(self, W, ell) -> np.ndarray:
        """Ψ⁻¹W (I + WᵀΨ⁻¹W)⁻¹ (d×r) for (W, ℓ) in the units of the data."""
        u = self._u[:, None]
        F = self._factors(np.asarray(W, float) / u, np.asarray(ell, float) - self._log_u2)
        return F["Y"] / u  # E[z | x] = (x − μ)ᵀ Ψ⁻¹W (I + WᵀΨ⁻¹W)⁻¹

    def posterior_map(self, M) -> np.ndarray:
        """The d×r matrix A of the posterior mean, ``transform(X, M) == (X − mean_) @ A``:
        A = Ψ⁻¹W (I + WᵀΨ⁻¹W)⁻¹ (Ψ = σ²I for PPCA)."""
        W, noise = self.unpack(M)
        return self._posterior_map(W, np.broadcast_to(np.log(noise), (W.shape[0],)))

    def _validate_loadings(self, W, name: str = "W") -> np.ndarray:
        W = np.array(W, dtype=float)
        d, r = self.S.shape[0], self._rank
        if W.shape == (r, d) and (r, d) != (d, r):
            raise ParameterError(name, f"expected shape {(d, r)}, got {W.shape}; "
                             "scikit-learn's components_ is (r, d): pass components_.T")
        if W.shape != (d, r) or not np.all(np.isfinite(W)):
            raise ParameterError(name, f"expected a finite array of shape {(d, r)}, got {W.shape}")
        return W

    def log_likelihood(self, M) -> float:
        """Mean log-likelihood per sample, −cost(M) (scikit-learn's ``score``)."""
        return -float(self.cost(M))
