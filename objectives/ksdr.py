"""Kernel sufficient dimension reduction (KDR; survey §3.1.7, Eq. 14–16; Fukumizu et al. 2004,
2009).

Rows x_i of X are covariates, z_i the responses (``y``), H = I − 11ᵀ/n, and for M orthonormal
d×r:  K = K_{XM} with K_ij = exp(−‖Mᵀ(x_i − x_j)‖²/2σ²),  K̄ = HKH,  K̄_Z = H K_Z H,

    R(M) = (K̄ + nεI)⁻¹,        Γ(M) = R K̄_Z R         (HR = RH, so Γ is already centered)

* cost      f(M) = tr(K̄_Z (K̄_{XM} + nεI)⁻¹) = tr(K̄_Z R)                 (Eq. 15–16)
* gradient  df = −tr(K̄_Z R dK̄ R) = −tr(Γ dK), so with Ψ = Γ ⊙ K, L_Ψ = diag(Ψ1) − Ψ:
            ∇f(M) = (2/σ²) Xᵀ L_Ψ X M
* Φ-oracle  Φ(M) = Xᵀ L_Ψ X / σ²     (the Gaussian HSIC Φ of DESIGN.md with Γ = Γ(M)).
            Γ moves with M here, so Φ(M)'s eigenvectors are not a fixed-point map of the
            cost's critical points: ISM on it stalls; use gradient or trust region.
* Hessian   D∇f(M)[V] = (2/σ²) Xᵀ (L_{Ψ′} XM + L_Ψ XV),   Ψ′ = Γ′ ⊙ K + Γ ⊙ K′,
            K′_ij = −K_ij (u_ij ᵀ w_ij)/σ²  (u = Mᵀ(x_i − x_j), w = Vᵀ(x_i − x_j)),
            Γ′ = −(R K̄′ Γ + Γ K̄′ R),  K̄′ = HK′H
* heuristic gradient-based KDR (gKDR; Fukumizu & Leng, 2014 — not in the survey): the top-r
            eigenvectors of  Σ_i ∇k(x_i)ᵀ (G + nεI)⁻¹ G_Z (G + nεI)⁻¹ ∇k(x_i),  with G, G_Z the
            uncentered Gram matrices of X (full dimension, width ``sigma_full``) and Z, and
            ∇k(x_i) the n×d matrix of ∂k(x_j, x)/∂x at x = x_i.  In closed form, with
            F = (G + nεI)⁻¹ G_Z (G + nεI)⁻¹ and P = (GF) ⊙ G:
            Xᵀ [G² ⊙ F − P − Pᵀ + diag(diag(GFG))] X / σ⁴.

The responses: real ``y`` (n,) or (n, ℓ) → Gaussian kernel on z (width ``sigma_y``, default
the median pairwise distance); class labels → one-hot codes with the linear kernel, i.e.
K_Z = [y_i = y_j].  In the population the cost is at least its value with all d directions,
with equality iff Eq. 14 holds (Fukumizu et al.).  It is invariant to M → MR, so the
manifold is Grassmann.  Each evaluation costs
O(n³/3) (a Cholesky factorization of K̄ + nεI) and O(n²·ρ) beyond it, ρ the rank of K_Z
(K_Z = EEᵀ, K̄_Z = FFᵀ with F = HE: R is applied to F, never formed; Γ = (RF)(RF)ᵀ); memory
is O(n²).
"""

from __future__ import annotations

import numbers

import autograd.numpy as anp
import numpy as np
import scipy.linalg

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.linalg import cholesky, cholesky_solve
from ldr.core.objective import Method, Objective
from ldr.data import arrays
from ldr.data.validation import check_data, check_labels, check_rank, check_rows
from ldr.kernels import beta, median_distance

__all__ = ["KernelSDR"]

Y_TYPES = ("auto", "continuous", "classes")


def _positive(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not np.isfinite(value) or value <= 0:
        raise ParameterError(name, f"must be a positive number, got {value!r}")
    return float(value)


def _centered(K):
    """HKH: K less its column means, then its row means (in K's namespace)."""
    xp = arrays.namespace(K)
    K = K - xp.mean(K, axis=0, keepdims=True)
    return K - xp.mean(K, axis=1, keepdims=True)


def gram_factor(y, Kz: np.ndarray, kind: str) -> np.ndarray:
    """E with K_Z = EEᵀ for the responses ``y`` and their Gram matrix ``Kz``: for class
    labels (K_Z = [y_i = y_j]) the one-hot indicators, exactly; otherwise V√λ over the
    eigenpairs of K_Z with λ above 1e-12 of the largest (a Gaussian kernel on a few responses
    has a numerical rank of a few dozen), K_Z to rounding."""
    if kind == "classes":
        classes, codes = check_labels(np.asarray(y), Kz.shape[0], "y")
        return np.eye(len(classes))[codes]
    lam, V = scipy.linalg.eigh(Kz)
    keep = lam > 1e-12 * max(lam[-1], 1e-300)
    return V[:, keep] * np.sqrt(lam[keep])


def _laplacian_times(Psi, Y):
    """L_Ψ Y = diag(Ψ1) Y − ΨY."""
    return arrays.namespace(Psi).sum(Psi, axis=1)[:, None] * Y - Psi @ Y


def response_gram(y, n: int, y_type: str = "auto", sigma_y: float | None = None
                  ) -> tuple[np.ndarray, str, float | None]:
    """``(K_Z, kind, σ_y)``: the response Gram matrix (uncentered) for ``y`` of n samples.

    ``y_type="auto"`` follows scikit-learn's :func:`~sklearn.utils.multiclass.type_of_target`:
    real values (floats that are not all integers, or 2-D float targets) are continuous, and
    anything else — integers, strings, booleans, and floats that are all integer-valued, as
    tables often store class codes (``1.0``, ``2.0``) — class labels.
    """
    if y_type not in Y_TYPES:
        raise ParameterError("y_type", f"expected one of {Y_TYPES}, got {y_type!r}")
    if y is None:
        raise ParameterError("y", "the responses are required, got None")
    arr = np.asarray(y)
    if arr.shape[:1] != (n,) or arr.ndim not in (1, 2):
        raise ParameterError("y", f"expected {n} responses (one per sample of X, shape (n,) or "
                         f"(n, n_targets)), got shape {arr.shape}")
    kind = y_type
    if kind == "auto":
        from sklearn.utils.multiclass import type_of_target

        if arr.dtype.kind == "f":
            check_data(arr.reshape(n, -1), "y")  # NaN/inf named before the target's type
        real = arr.dtype.kind == "f" and type_of_target(arr).startswith("continuous")
        kind = "continuous" if real else "classes"
    if kind == "classes":
        _, codes = check_labels(arr, n, "y")
        return (codes[:, None] == codes[None, :]).astype(float), kind, None
    Z = check_data(arr.reshape(n, -1), "y")
    if sigma_y is None:
        try:
            sigma_y = median_distance(Z)
        except ValueError:
            raise ParameterError(
                "y", "the median pairwise distance of the responses is 0 (constant "
                             "or mostly repeated values); pass sigma_y > 0, or "
                             "y_type='classes' for class labels") from None
    return np.exp(-beta("difference", Z) / (2.0 * sigma_y**2)), kind, sigma_y


class KernelSDR(Objective):
    """Kernel dimension reduction: minimize tr(K̄_Z (K̄_{XM} + nεI)⁻¹) over orthonormal M.

    Parameters
    ----------
    X : array (n_samples, n_features)
        Covariates, used as given (centering does not change the cost); standardize features
        of different units first.  X of another array namespace (a PyTorch tensor on the
        CPU or a GPU, CuPy, ...) keeps its rows and the responses' factors there, in its
        float dtype: the kernel, its Cholesky factorization and solves
        (:func:`ldr.core.linalg.cholesky_solve`), cost, gradient, HVPs, Φ and the gKDR
        matrix are computed there, and ``ldr.solve`` iterates there.
    y : array (n_samples,) or (n_samples, n_targets)
        Responses: real values, or class labels (see ``y_type``).
    r : int, 1 ≤ r < n_features
    ridge : float
        Regularization ε of Eq. 15 (the n·ε added to K̄_{XM}); default 1e-3.
    sigma : float, optional
        Width of the Gaussian kernel on XM; default median pairwise distance of X × √(r/d)
        (about the median distance of an r-dimensional projection).
    sigma_y : float, optional
        Width of the Gaussian kernel on continuous y; default their median distance.
    sigma_full : float, optional
        Width of the kernel on X for the gKDR heuristic; default median distance of X.
    y_type : {"auto", "continuous", "classes"}
    manifold : {"grassmann", "stiefel"}

    Attributes
    ----------
    mean_, sigma, sigma_y, y_type_, Kz (centered response Gram matrix K̄_Z)

    Examples
    --------
    >>> import numpy as np, ldr
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 4))
    >>> b = np.array([1.0, 1.0, 0.0, 0.0]) / np.sqrt(2)
    >>> y = np.sin(2 * X @ b) + 0.05 * rng.standard_normal(80)
    >>> obj = ldr.objectives.KernelSDR(X, y, 1)
    >>> res = ldr.solve(obj, "trust-region", start="heuristic")
    >>> bool(ldr.manifolds.sin_largest_angle(res.M, b[:, None]) < 0.2)
    True

    Default solver: ``"trust-region"``: ISM does not converge on this cost (module
    docstring), and the cost has a closed-form Hessian.
    """

    method = Method("ksdr", "kernel sufficient dimension reduction, tr(K̄_Y (K̄_XM + nεI)⁻¹)",
                    supervised=True, memory=lambda n, sizes: 8 * 10.1 * n**2)

    default_solver = "trust-region"

    def __init__(self, X, y, r: int, ridge: float = 1e-3, sigma: float | None = None,
                 sigma_y: float | None = None, sigma_full: float | None = None,
                 y_type: str = "auto", manifold: str = "grassmann", *, eps="deprecated"):
        ridge = renamed_value(type(self).__name__, "eps", "ridge", eps, ridge)
        X = check_rows(X, "X")  # X's namespace and device: only read
        n, d = X.shape
        r = check_rank(r, d)
        ridge = _positive(ridge, "ridge")
        sigma, sigma_y = _positive(sigma, "sigma"), _positive(sigma_y, "sigma_y")
        self.sigma_full = _positive(sigma_full, "sigma_full")
        Kz, self.y_type_, self.sigma_y = response_gram(y, n, y_type, sigma_y)
        # centred about the first row first: a constant feature (1e30 in every row) is then
        # exactly 0, not the rounding of its mean (1e14), which the kernel would read as
        # a direction of huge, cancelling distances
        xp = arrays.namespace(X)
        shifted = X - X[0:1, :]
        offset = xp.mean(shifted, axis=0)
        self.mean_ = np.asarray(arrays.to_host(X[0, :] + offset), dtype=float)
        self.X = shifted - offset
        if sigma is None:
            sigma = median_distance(self.X) * np.sqrt(r / d)
        self.sigma = float(sigma)
        self.ridge = ridge
        self._Gz = Kz                     # uncentered, for the gKDR heuristic
        self.Kz = _centered(Kz)
        self.Kz = 0.5 * (self.Kz + self.Kz.T)
        # K_Z = EEᵀ, so K̄_Z = FFᵀ with F = HE (n × rank): every oracle applies R to F only
        Ez = gram_factor(y, Kz, self.y_type_)
        self._Ez = arrays.like(Ez, self.X)  # the responses' factors, where the rows are
        self._Fz = arrays.like(Ez - Ez.mean(axis=0), self.X)
        self.shape = (d, r)
        self.manifold = manifold
        self._key: bytes | None = None

    # -- cost (autograd-traceable) ------------------------------------------------------------
    def cost(self, M):
        if not arrays.traced(M):  # a value: reuse the cached factorization
            _, _, _, RF, _ = self._at(M)
            return float(arrays.namespace(RF).sum(self._Fz * RF))  # tr(FᵀRF) = tr(K̄_Z R)
        Y = anp.dot(self.X, M)
        sq = anp.sum(Y**2, axis=1)
        K = anp.exp(-(sq[:, None] + sq[None, :] - 2.0 * anp.dot(Y, Y.T)) / (2 * self.sigma**2))
        Kc = K - anp.mean(K, axis=0, keepdims=True)
        Kc = Kc - anp.mean(Kc, axis=1, keepdims=True)
        n = self.X.shape[0]
        return anp.trace(anp.linalg.solve(Kc + n * self.ridge * anp.eye(n), self.Kz))

    # -- closed-form oracles ------------------------------------------------------------------
    def _at(self, M):
        """(Y, K, the Cholesky factor of K̄ + nεI, RF, Γ = (RF)(RF)ᵀ) at M, cached across the
        Hessian-vector products of one solve: one factorization, O(n³/3), and the rest
        O(n²·rank K_Z) — R is applied to F, never formed."""
        M = self._point(M)
        key = np.asarray(arrays.to_host(M)).tobytes()
        if self._key != key:
            xp = arrays.namespace(M)
            Y = self.X @ M
            K = xp.exp(-beta("difference", Y) / (2 * self.sigma**2))
            n = K.shape[0]
            A = _centered(K)
            A = 0.5 * (A + A.T)
            factor = cholesky(A, n * self.ridge, overwrite=True)
            RF = cholesky_solve(factor, self._Fz)
            self._key = key
            self._vals = (Y, K, factor, RF, RF @ RF.T)
        return self._vals

    def _point(self, M):
        """M as an array of the rows' namespace, device and float dtype."""
        return arrays.as_point(M, self.X)

    def egrad(self, M):
        Y, K, _, _, G = self._at(M)
        return (2.0 / self.sigma**2) * (self.X.T @ _laplacian_times(G * K, Y))

    def phi(self, M) -> np.ndarray:
        _, K, _, _, G = self._at(M)
        P = self.X.T @ _laplacian_times(G * K, self.X) / self.sigma**2
        return 0.5 * (P + P.T)

    def ehvp(self, M, V):
        Y, K, factor, RF, G = self._at(M)
        Z = self.X @ self._point(V)
        yz = arrays.namespace(Y).sum(Y * Z, axis=1)
        uw = yz[:, None] + yz[None, :] - Y @ Z.T - Z @ Y.T      # u_ijᵀ w_ij
        Kp = -K * uw / self.sigma**2
        T = cholesky_solve(factor, _centered(Kp) @ RF) @ RF.T   # R K̄′ Γ
        Psi_p = -(T + T.T) * K + G * Kp
        out = _laplacian_times(Psi_p, Y) + _laplacian_times(G * K, Z)
        return (2.0 / self.sigma**2) * (self.X.T @ out)

    def heuristic(self) -> np.ndarray:
        """gKDR (Fukumizu & Leng, 2014): top-r eigenvectors of the averaged gradient outer
        product of the kernel regression of the response on X (module docstring)."""
        d, r = self.shape
        _, V = scipy.linalg.eigh(self.gkdr_matrix(), subset_by_index=[d - r, d - 1])
        return V[:, ::-1].copy()

    def gkdr_matrix(self) -> np.ndarray:
        """The d×d gKDR matrix Σ_i ∇k(x_i)ᵀ F ∇k(x_i) / n (module docstring)."""
        X = self.X
        xp = arrays.namespace(X)
        n = self.X.shape[0]
        s = self.sigma_full if self.sigma_full is not None else median_distance(X)
        G = xp.exp(-beta("difference", X) / (2 * s**2))
        cf = cholesky(G, n * self.ridge)                    # of G + nεI; G kept
        AE = cholesky_solve(cf, self._Ez)                   # F = (AE)(AE)ᵀ, G_Z = EEᵀ
        F = AE @ AE.T
        P = ((G @ AE) @ AE.T) * G
        GFG = xp.vecdot(G @ F, G, axis=-1)                  # diag(GFG), G symmetric
        Q = (G @ G) * F - P - P.T
        Xs = X / s  # Xᵀ Q X / s⁴ as (X/s)ᵀ Q (X/s) / s²: s⁴ overflows for data at 1e90
        out = (Xs.T @ (Q @ Xs) + Xs.T @ (GFG[:, None] * Xs)) / (n * s**2)
        return np.asarray(arrays.to_host(0.5 * (out + out.T)), dtype=float)

    def linear_map(self, M):
        """x ↦ (x − ``mean_``) M."""
        return self.mean_, M
