"""Latent-variable Gaussian models: probabilistic PCA and factor analysis (survey §3.2.2–3.2.3).

Both model a sample (a row x of X) as ``x = μ + W z + ε`` with ``z ~ N(0, I_r)`` and Gaussian
noise ε, so that ``x ~ N(μ, C)`` with

* PPCA (Tipping & Bishop 1999):  ``C = WWᵀ + σ²I``         (survey Eq. 22)
* FA   (Spearman 1904):          ``C = WWᵀ + Ψ``, Ψ = diag(ψ) > 0  (survey Eq. 23)

with the loadings ``W ∈ R^{d×r}`` unconstrained ("euclidean").  μ is the sample mean (its
maximum-likelihood value) and ``S = (1/n) Σ (x_i − μ)(x_i − μ)ᵀ`` the biased covariance.  The
cost is the **negative mean log-likelihood per sample**, directly comparable with
scikit-learn's ``score`` (which is the positive mean)::

    f(W, ψ) = ½ [ d log 2π + log|C| + tr(C⁻¹S) ].

The survey writes ``log|C| + tr(C⁻¹XXᵀ)`` "∝ −log p(X|M)": with XXᵀ un-normalized the two
terms are not in the likelihood's proportion; the likelihood has ``tr(C⁻¹ XXᵀ)/n``, i.e.
tr(C⁻¹S) — checked here against ``scipy.stats.multivariate_normal.logpdf``.

Noise variances are parameterized by their logarithms, ``ℓ = log ψ`` (``log σ²`` for PPCA),
so they live on a Euclidean factor and stay positive.  The point M holds both **in units of
the data's scale**: for PPCA c = √(tr S / d), ``M = (W / c, ℓ − 2 log c)``; for FA, which is
equivariant to each feature's units, each feature's standard deviation u_j,
``M = (W_j / u_j, ℓ_j − 2 log u_j)`` row by row.  So M, the gradient and every solver's
iterates are the same whatever the units of X (multiplying X by s changes the cost by the
constant d·log s and nothing else), and the model is evaluated in those units (S/uuᵀ), so
that data at 1e-90 or 1e90, or features at 1 and 1e-30 side by side, neither underflow nor
overflow.  :meth:`unpack` and :meth:`point` convert.
Below, W and ℓ are in the units of the data.  With ``D = Ψ⁻¹``, ``L = DW``,
``K = (I_r + WᵀDW)⁻¹`` (r×r), the matrix determinant lemma and Woodbury give

    log|C| = Σ ℓ_i + log|K⁻¹|,     P := C⁻¹ = D − L K Lᵀ,     P W = L K,

so the cost needs one d×d-by-d×r product (``S L``) and r×r factorizations, never a d×d
inverse.  With ``A = P − PSP``:

* gradient   ``∂f/∂W = A W``,   ``∂f/∂ℓ = ½ ψ ⊙ diag(A)``   (PPCA: ``∂f/∂log σ² = ½ σ² tr A``)
* Hessian-vector product along ``(V, η)``, ``δψ = ψ ⊙ η``, ``Δ = VWᵀ + WVᵀ + diag(δψ)``,
  ``Q = PSP``:  ``dA = −PΔP + PΔQ + QΔP``;  W-part ``dA·W + A V``;
  ℓ-part ``½ [δψ ⊙ diag(A) + ψ ⊙ diag(dA)]``.

The gradient costs O(d²r) (``diag(PSP)`` from the Woodbury factors); a Hessian-vector product
costs O(d²r) after an O(d³) set-up (``P`` and ``PSP``) cached per point, which truncated CG
amortizes over its inner iterations.

The low-dimensional mapping is the posterior mean ``E[z | x] = (I + WᵀΨ⁻¹W)⁻¹ WᵀΨ⁻¹ (x − μ)``
(= ``(WᵀW + σ²I)⁻¹Wᵀ(x − μ)`` for PPCA; the survey's ``Wᵀ(WWᵀ + σ²I)⁻¹(x − μ)`` is the same
matrix by the push-through identity).  The cost is invariant to ``W → WR`` (R orthogonal): the
optimum is a set of loadings, its span is what is identified.

PPCA has a closed form (Tipping & Bishop, their Appendix A): with ``S = U Λ Uᵀ``, eigenvalues
in decreasing order, ``σ² = mean(λ_{r+1}, …, λ_d)`` and ``W = U_r (Λ_r − σ²I)^{1/2}``.  FA has
none; scikit-learn fits it by alternating an exact W-step (an SVD of the Ψ^{-1/2}-scaled data)
with a ψ update.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective
from ldr.data import arrays
from ldr.data.rows import is_chunked, moments
from ldr.data.statistics import Moments
from ldr.data.validation import check_data, check_new_data, check_rank

__all__ = ["FactorAnalysis", "PPCA"]

#: float64's machine epsilon: the rank and constant-feature thresholds are multiples of it
_EPS = float(np.finfo(float).eps)


# --- the shared Gaussian latent-variable core ------------------------------------------------
_LOG_2PI = float(np.log(2.0 * np.pi))


def _check_samples(n: int, r: int, method: str) -> None:
    """Raise a ParameterError naming X when n < r + 2 samples: the sample covariance (rank at
    most n − 1) must exceed rank r, or the noise variance goes to 0 and the likelihood is
    unbounded."""
    if n < r + 2:
        raise ParameterError("X",
            f"{method} with r={r} needs at least r + 2 = {r + 2} samples (the sample "
            f"covariance has rank ≤ n − 1 and must exceed r, or the noise variance goes to 0 "
            f"and the likelihood is unbounded); got {n}"
        )


def _key(*parts) -> bytes:
    return b"".join(np.ascontiguousarray(a, dtype=float).tobytes() for a in parts)


_POTRF, _POTRS = scipy.linalg.get_lapack_funcs(("potrf", "potrs"), (np.zeros((1, 1)),))


def _cho_inverse(A: np.ndarray) -> np.ndarray:
    """A⁻¹ of a small symmetric positive definite float64 matrix: ``scipy.linalg.cho_solve(
    cho_factor(A), I)``'s LAPACK calls (dpotrf, dpotrs) with its checks, without its
    wrappers' overhead (the fixed cost per fit).  A LinAlgError where A is not numerically
    positive definite, as ``cho_factor``."""
    # benchmark: benchmarks/bench_real.py --no-cv
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


class _LatentGaussian(Objective):
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
        # NumPy itself at plain arrays (autograd's wrappers call the same functions with a
        # few µs each of overhead), autograd where it traces the cost
        # benchmark: benchmarks/bench_real.py --no-cv
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
            F["P"] = P
            F["Q"] = 0.5 * (Q + Q.T)
        P = F["P"]
        Q = F["Q"]
        Y = F["Y"]
        Z = F["Z"]
        psi = F["psi"]
        dpsi = psi * eta

        def delta(X):  # Δ X with Δ = VWᵀ + WVᵀ + diag(δψ)
            return V @ (W.T @ X) + W @ (V.T @ X) + dpsi[:, None] * X

        DY = delta(Y)
        PV = P @ V
        QV = Q @ V
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
        d = self.S.shape[0]
        r = self._rank
        if W.shape == (r, d) and (r, d) != (d, r):
            raise ParameterError(name, f"expected shape {(d, r)}, got {W.shape}; "
                             "scikit-learn's components_ is (r, d): pass components_.T")
        if W.shape != (d, r) or not np.all(np.isfinite(W)):
            raise ParameterError(name, f"expected a finite array of shape {(d, r)}, got {W.shape}")
        return W

    def log_likelihood(self, M) -> float:
        """Mean log-likelihood per sample, −cost(M) (scikit-learn's ``score``)."""
        return -float(self.cost(M))


# --- the two models ----------------------------------------------------------------------------
class PPCA(_LatentGaussian):
    """Probabilistic PCA: minimize the negative mean log-likelihood of N(μ, WWᵀ + σ²I).

    Parameters
    ----------
    X : array of shape (n_samples, n_features), Dask array, iterator of chunks or Moments
        Data as rows (centered on a copy; ``X`` is not modified); only the covariance is
        kept, computed in one pass by :func:`ldr.data.rows.moments`.
    r : int
        Latent dimension, 1 ≤ r < n_features.
    noise_variance : float > 0, optional
        A fixed σ².  Then M is the loading matrix W ∈ R^{d×r} alone ("euclidean").  When
        omitted (default) σ² is estimated too: M is the pair ``(W, [[log σ²]])`` on the
        product ("euclidean", "euclidean") with shape ((d, r), (1, 1)).  We keep σ² as a
        parameter rather than profiling it out because for a general W the optimal σ² has no
        closed form (only at W's aligned with eigenvectors): profiling would put a 1-D solve
        inside every cost evaluation and make the Hessian awkward, whereas log σ² as an extra
        coordinate keeps cost, gradient and Hessian closed-form and σ² > 0 automatically.

    Attributes
    ----------
    mean_ : (n_features,) sample mean
    S : (n_features, n_features) covariance divided by n (the maximum-likelihood scaling)
    eigenvalues_ : eigenvalues of S, decreasing
    noise_variance : the fixed σ², or None

    Notes
    -----
    scikit-learn's ``PCA(n_components=r).score(X)`` is this model's mean log-likelihood, but
    evaluated at parameters built from the covariance divided by n − 1: its model covariance
    is a·C* with a = n/(n − 1) and C* the maximum-likelihood one, so it falls short of the
    maximum by exactly ½ d (log a + 1/a − 1) ≈ d/(4n²) (tr(C*⁻¹S) = d at the optimum).  At
    scikit-learn's own parameters, :meth:`log_likelihood` equals its score to rounding.

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = np.random.default_rng(0).standard_normal((200, 5)) * [5, 4, 1, 1, 1]
    >>> obj = ldr.objectives.PPCA(X, 2)
    >>> res = ldr.solve(obj, "trust-region", random_state=0, tol=1e-10)
    >>> W, sigma2 = obj.unpack(res.M)
    >>> bool(abs(obj.log_likelihood(res.M) - obj.log_likelihood(obj.closed_form())) < 1e-9)
    True
    >>> obj.transform(X, res.M).shape
    (200, 2)

    Default solver: ``"trust-region"`` (Euclidean factors, no Φ-oracle).
    """

    method = Method("ppca", "probabilistic PCA, negative log-likelihood on R^{d×r}", chunks={})

    @staticmethod
    def max_rank(X, y=None) -> int:
        """The largest r whose discarded eigenvalues of the covariance are not all zero
        (σ² > 0, the rule ``__init__`` checks), at most n_features − 1: the estimators'
        ``n_components=None``.  On data of numerical rank k < n_features (constant or
        collinear features) that is k − 1.  A lazy X (Dask, memmap) is not
        read for it: n_features − 1; :class:`~ldr.data.statistics.Moments` give it from their
        covariance."""
        if isinstance(X, Moments):  # the statistics of the rows: no pass over them
            d = X.d
            C = X.covariance(ddof=1)
        elif is_chunked(X) or arrays.foreign(X) is not None:  # not read for it
            return int(X.shape[1]) - 1
        else:
            d = int(X.shape[1])
            C = np.cov(np.asarray(X, dtype=float), rowvar=False)
        ev = np.linalg.eigvalsh(np.asarray(C).reshape(d, d))
        ev = np.clip(ev[::-1], 0.0, None)
        tol = 1e3 * d * _EPS * max(ev[0], np.finfo(float).tiny)
        r = d - 1
        while r > 1 and ev[r:].mean() <= tol:
            r -= 1
        return r

    def __init__(self, X, r: int, noise_variance: float | None = None):
        stats = moments(X, name="X")
        d = stats.d
        r = check_rank(r, d)
        self._rank = r
        if noise_variance is not None:
            if isinstance(noise_variance, bool) or not isinstance(
                    noise_variance, (int, float, np.floating, np.integer)) \
                    or not np.isfinite(noise_variance) or noise_variance <= 0:
                raise ParameterError("noise_variance",
                    f"must be a positive finite number (a fixed σ²), or None "
                    f"to estimate it; got {noise_variance!r}")
            noise_variance = float(noise_variance)
        else:
            _check_samples(stats.n, r, "PPCA")
        self._init_data(stats)
        self.noise_variance = noise_variance
        if noise_variance is None:
            ev = self.eigenvalues_
            if ev[r:].mean() <= 1e3 * d * _EPS * max(ev[0], np.finfo(float).tiny):
                raise ParameterError("X",
                    f"the data lie (numerically) in a subspace of dimension ≤ r = {r}: the "
                    "discarded eigenvalues of the covariance are zero, so σ² → 0 and the "
                    "likelihood is unbounded. Use a smaller r, or fix the noise with "
                    "noise_variance=...")
            self.shape = ((d, r), (1, 1))
            self.manifold = ("euclidean", "euclidean")
        else:
            self.shape = (d, r)
            self.manifold = "euclidean"

    # --- point layout ---------------------------------------------------------------------
    def unpack(self, M) -> tuple[np.ndarray, float]:
        """``(W, σ²)`` of a point M, in the units of the data."""
        if self.noise_variance is not None:
            return self.unit_ * np.asarray(M, float), self.noise_variance
        return (self.unit_ * np.asarray(M[0], float),
                float(np.exp(np.asarray(M[1], float).ravel()[0] + self._log_unit2)))

    def point(self, W, noise_variance: float | None = None):
        """The point M holding loadings ``W`` (d×r) and σ² (ignored when σ² is fixed).

        E.g. scikit-learn's PCA: ``W = components_.T * sqrt(explained_variance_ −
        noise_variance_)``, ``noise_variance = noise_variance_``.
        """
        W = self._validate_loadings(W) / self.unit_
        if self.noise_variance is not None:
            return W
        if noise_variance is None or not np.isfinite(noise_variance) or noise_variance <= 0:
            raise ParameterError(
                "noise_variance", f"must be a positive number, got {noise_variance!r}")
        return W, np.array([[np.log(noise_variance) - self._log_unit2]])

    def _split(self, M):
        """(W, ℓ) in units of c (the model's own units) from the point M."""
        d = self.shape[0] if self.noise_variance is not None else self.shape[0][0]
        if self.noise_variance is not None:
            return M, np.full(d, np.log(self.noise_variance) - self._log_unit2)
        return M[0], M[1][0, 0] * arrays.namespace(M[1]).ones(d)  # autograd's where traced

    # --- oracles (the model in units of c: M is (W/c, ℓ − 2 log c) itself) ------------------
    def cost(self, M):
        W, ell = self._split(M)
        return self._cost_wl(W, ell)

    def egrad(self, M):
        W, ell = self._split(M)
        gW, g_ell = self._grad_wl(np.asarray(W, float), np.asarray(ell, float))
        if self.noise_variance is not None:
            return gW
        return gW, np.array([[g_ell.sum()]])

    def ehvp(self, M, V):
        W, ell = self._split(M)
        d = W.shape[0]
        if self.noise_variance is not None:
            return self._hvp_wl(np.asarray(W, float), ell, np.asarray(V, float),
                                np.zeros(d))[0]
        eta = np.full(d, float(np.asarray(V[1]).ravel()[0]))
        hW, h_ell = self._hvp_wl(np.asarray(W, float), np.asarray(ell, float),
                                 np.asarray(V[0], float), eta)
        return hW, np.array([[h_ell.sum()]])

    def closed_form(self):
        """Tipping & Bishop's maximum-likelihood point (R = I).

        ``σ² = mean(λ_{r+1..d})`` (or the fixed σ²) and ``W = U_r (Λ_r − σ²I)₊^{1/2}`` (a
        column is 0 where λ_k ≤ σ², possible only with a fixed σ²).
        """
        r = self._rank
        ev = self.eigenvalues_
        sigma2 = self.noise_variance if self.noise_variance is not None else float(ev[r:].mean())
        W = self._evecs[:, :r] * np.sqrt(np.maximum(ev[:r] - sigma2, 0.0)) / self.unit_
        if self.noise_variance is not None:
            return W
        return W, np.array([[np.log(sigma2) - self._log_unit2]])

    def heuristic(self):
        """The closed form (it is the global optimum, so no solver can improve it)."""
        return self.closed_form()

    def covariance(self, M) -> np.ndarray:
        """The model covariance WWᵀ + σ²I."""
        W, sigma2 = self.unpack(M)
        return W @ W.T + sigma2 * np.eye(W.shape[0])

    def linear_map(self, M):
        """The posterior mean E[z | x] = (WᵀW + σ²I)⁻¹Wᵀ(x − μ): x ↦ (x − ``mean_``) A."""
        return self.mean_, self.posterior_map(M)


class FactorAnalysis(_LatentGaussian):
    """Factor analysis: minimize the negative mean log-likelihood of N(μ, WWᵀ + Ψ).

    M is the pair ``(W, log ψ)`` on the product ("euclidean", "euclidean") with shape
    ((d, r), (d, 1)): loadings W and the logarithms of the diagonal noise variances.

    Parameters
    ----------
    X : array of shape (n_samples, n_features), Dask array, iterator of chunks or Moments
        Data as rows (centered on a copy; statistics by :func:`ldr.data.rows.moments`).  A
        constant feature is an error: its noise variance ψ_j would go to 0 (log ψ_j → −∞)
        and the likelihood is unbounded — drop it.  With other Heywood cases (a feature
        fully explained by the factors) some log ψ_j drifts towards −∞ during a solve and
        the run stops on its tolerances; scikit-learn floors ψ at 1e-12 there, this
        objective has no floor.
    r : int
        Number of factors, 1 ≤ r < n_features; at least r + 2 samples are needed.

    Attributes
    ----------
    mean_, S, eigenvalues_ : as in :class:`PPCA`

    Examples
    --------
    >>> import numpy as np, ldr
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 6)) * 2
    >>> X += rng.standard_normal((300, 6)) * [0.5, 1, 1.5, 0.5, 1, 2]
    >>> obj = ldr.objectives.FactorAnalysis(X, 2)
    >>> res = ldr.solve(obj, "trust-region", start=obj.start_like_sklearn())
    >>> W, psi = obj.unpack(res.M)
    >>> bool(obj.log_likelihood(res.M) > obj.log_likelihood(obj.heuristic()))
    True

    Default solver: ``"trust-region"`` (Euclidean factors, no Φ-oracle).
    """

    method = Method("fa", "factor analysis, negative log-likelihood on R^{d×r} × R^d",
                    chunks={})

    def __init__(self, X, r: int):
        chunked = is_chunked(X)
        if not chunked:
            X = check_data(X, "X")
        stats = moments(X, name="X")
        d = stats.d
        r = check_rank(r, d)
        self._rank = r
        _check_samples(stats.n, r, "FactorAnalysis")
        if chunked:  # the spread from the variance, the scale from the mean
            scale = np.abs(stats.mean) + np.sqrt(np.diag(stats.covariance()))
            const = np.flatnonzero(np.sqrt(np.diag(stats.covariance())) <= 4 * _EPS * scale)
        else:
            scale = np.max(np.abs(X), axis=0)
            const = np.flatnonzero(np.ptp(X, axis=0) <= 4 * _EPS * scale)
        if const.size:
            raise ParameterError("X",
                f"feature(s) {const.tolist()} are constant; factor analysis would drive "
                "their noise variance ψ_j to 0 (log ψ_j → −∞, unbounded likelihood). Drop "
                "constant features before fitting.")
        self._init_data(stats)
        # FA is equivariant to each feature's units (W_j → s_j W_j, ψ_j → s_j² ψ_j): M is in
        # units of each feature's standard deviation, so features at 1 and 1e-30 side by side
        # give a well-scaled model (Ψ⁻¹ would otherwise span 1e60)
        self.feature_unit_ = np.sqrt(np.maximum(np.diag(self.S), np.finfo(float).tiny))
        self._set_units(self.feature_unit_)
        self.shape = ((d, r), (d, 1))
        self.manifold = ("euclidean", "euclidean")

    def unpack(self, M) -> tuple[np.ndarray, np.ndarray]:
        """``(W, ψ)`` of a point M: loadings (d×r) and noise variances (d,), in the units of
        the data."""
        return (self._u[:, None] * np.asarray(M[0], float),
                np.exp(np.asarray(M[1], float).ravel() + self._log_u2))

    def point(self, W, noise_variance) -> tuple[np.ndarray, np.ndarray]:
        """The point M for loadings ``W`` (d×r) and noise variances ψ (d,).

        For a fitted ``sklearn.decomposition.FactorAnalysis``:
        ``point(fa.components_.T, fa.noise_variance_)``.
        """
        W = self._validate_loadings(W)
        psi = np.asarray(noise_variance, dtype=float).ravel()
        if psi.shape != (W.shape[0],) or not np.all(np.isfinite(psi)) or np.any(psi <= 0):
            raise ParameterError("noise_variance",
                f"expected {W.shape[0]} positive finite variances, got "
                f"shape {psi.shape}")
        return W / self._u[:, None], (np.log(psi) - self._log_u2)[:, None]

    def _split(self, M):
        """(W, ℓ) in units of each feature's standard deviation (the model's own units): the
        point M itself."""
        return M[0], M[1][:, 0]

    def cost(self, M):
        return self._cost_wl(*self._split(M))

    def egrad(self, M):
        W, ell = self._split(M)
        gW, g_ell = self._grad_wl(np.asarray(W, float), np.asarray(ell, float))
        return gW, g_ell[:, None]

    def ehvp(self, M, V):
        W, ell = self._split(M)
        hW, h_ell = self._hvp_wl(np.asarray(W, float), np.asarray(ell, float),
                                 np.asarray(V[0], float), np.asarray(V[1], float)[:, 0])
        return hW, h_ell[:, None]

    def heuristic(self):
        """PPCA's closed form as an FA point (ψ_j = σ² for all j), on the data as given or on
        the standardized data (each feature divided by its standard deviation), whichever
        has the higher likelihood.

        FA contains PPCA, so the optimum is never worse; the normalized improvement over this
        point measures what per-feature noise buys.  The standardized candidate keeps the
        start (and so the fit) independent of each feature's units where the features'
        scales differ by many orders of magnitude.
        """
        r = self._rank
        ev = self.eigenvalues_
        sigma2 = float(ev[r:].mean())
        W = self._evecs[:, :r] * np.sqrt(np.maximum(ev[:r] - sigma2, 0.0))
        candidates = []
        if sigma2 > 0 and np.isfinite(sigma2):
            candidates.append(self.point(W, np.full(self.S.shape[0], sigma2)))
        w, V = scipy.linalg.eigh(self._S_unit)  # PPCA in the model's units (M directly)
        w, V = np.maximum(w[::-1], 0.0), V[:, ::-1]
        s2 = max(float(w[r:].mean()), np.finfo(float).tiny)
        candidates.append((V[:, :r] * np.sqrt(np.maximum(w[:r] - s2, 0.0)),
                           np.full((self.S.shape[0], 1), np.log(s2))))
        return min(candidates, key=self.cost)

    def start_like_sklearn(self):
        """The point where ``sklearn.decomposition.FactorAnalysis`` starts.

        scikit-learn sets ψ = 1 (``noise_variance_init=None``) and its first iteration takes
        the SVD of the centered data scaled by ``1/(√ψ·√n)``; with squared singular values
        s² (the eigenvalues of S) and right singular vectors U_r this gives
        ``W₀ = U_r diag(√max(s² − 1, 0))`` — the W that maximizes the likelihood for ψ = 1.
        Its first recorded log-likelihood (``loglike_[0] / n``) is at (W₀, ψ = 1), returned
        here as ``(W₀, zeros((d, 1)))``.  Reproduced up to scikit-learn's ``SMALL = 1e-12``
        added to √ψ (a 1e-12 relative change) and exactly only for ``svd_method="lapack"``
        (its default randomized SVD is approximate); signs of the columns may differ, which
        the likelihood does not see (W → WR).

        Where some of the top-r eigenvalues of S are ≤ 1, those columns of W₀ are zero: a
        saddle point that gradient-based solvers cannot leave (the gradient and every
        Hessian-vector product keep those columns at zero).  A warning is issued then;
        standardize less aggressively or start from :meth:`heuristic`.
        """
        r = self._rank
        ev = self.eigenvalues_[:r]
        if np.any(ev <= 1.0):
            warnings.warn(
                f"start_like_sklearn: {int(np.sum(ev <= 1.0))} of the top-{r} covariance "
                "eigenvalues are ≤ 1, so scikit-learn's start has zero loading columns, a "
                "saddle point gradient-based solvers cannot leave; consider heuristic()",
                RuntimeWarning, stacklevel=2)
        W = self._evecs[:, :r] * np.sqrt(np.maximum(ev - 1.0, 0.0))
        return self.point(W, np.ones(self.S.shape[0]))

    def covariance(self, M) -> np.ndarray:
        """The model covariance WWᵀ + Ψ."""
        W, psi = self.unpack(M)
        return W @ W.T + np.diag(psi)

    def linear_map(self, M):
        """The posterior mean E[z | x] = (I + WᵀΨ⁻¹W)⁻¹WᵀΨ⁻¹(x − μ) (scikit-learn's transform):
        x ↦ (x − ``mean_``) A."""
        return self.mean_, self.posterior_map(M)
