"""Low-rank linear distance metric learning (survey §3.2.5): NCA and large-margin DML.

Rows x_i of X are samples with class labels z_i.  A map L ∈ R^{r×d} (scikit-learn's
``components_`` layout) embeds u_i = L x_i and defines the distance
d_L(x_i, x_j)² = ‖L(x_i − x_j)‖² = ‖x_i − x_j‖²_{LᵀL}, a Mahalanobis metric of rank r.

**Neighbourhood components analysis** (Goldberger, Roweis, Hinton & Salakhutdinov 2004;
the objective scikit-learn's ``NeighborhoodComponentsAnalysis`` maximizes by L-BFGS)::

    p_ij = exp(−D_ij) / Σ_{k≠i} exp(−D_ik),   p_ii = 0,   D_ij = ‖u_i − u_j‖²
    f_NCA(L) = Σ_i p_i,   p_i = Σ_{j: z_j = z_i} p_ij          (the expected number of
                                                              leave-one-out 1-NN successes)

a **sum** over samples, as scikit-learn's (not a mean).  The cost minimized is −f_NCA.  With
A_ij = p_ij (p_i − 1[z_i = z_j]), S = A + Aᵀ and Lap(S) = diag(S1) − S,

    ∂f_NCA/∂U = 2 Lap(S) U          (U = XLᵀ, n×r)

and the Hessian-vector product differentiates it once more (dD, dp_ij, dp_i, dA below).

**Large-margin DML** (LMNN, Weinberger & Saul 2009, as the survey's Eq. 27 writes it)::

    f_LM(L) = Σ_i Σ_{j∈η(i)} ( D_ij + λ Σ_ℓ 1[z_ℓ ≠ z_i] h(1 + D_ij − D_iℓ) )

with η(i) the k **target neighbours** of x_i: its k nearest same-class samples in the *input*
space (Euclidean distance of X as given), fixed once before the optimization, as LMNN does
(a class with m ≤ k samples gives each of them its m − 1 classmates).  The survey's hinge
[·]_+ has no derivative at 0, so h is the **Huberized (quadratically smoothed) hinge**

    h(z) = 0 (z ≤ 0),   z²/(2δ) (0 < z < δ),   z − δ/2 (z ≥ δ)       (δ = ``smoothing``)

which is C¹ with h″ = 1/δ on (0, δ) and 0 elsewhere.  Chosen over softplus
(log(1 + e^{βz})/β) because it keeps LMNN's sparsity — triples (i, j, ℓ) outside the margin
(z ≤ 0) contribute exactly nothing, so the objective is the hinge's wherever the margin is
met or violated by more than δ (there it differs by the constant δ/2 per triple), while
softplus charges every one of the n²k triples log 2/β even at z = 0 and never vanishes.
The gradient has the same Laplacian form with weights W: W_ij = 1 + λ Σ_ℓ h′(z_ijℓ) for
target pairs and W_iℓ = −λ Σ_j h′(z_ijℓ) for impostors, ∂f_LM/∂U = 2 Lap(W + Wᵀ) U.

**Manifold: R^{d×r}, not Stiefel with a scale.**  Both methods learn a rank-r metric LᵀL,
whose eigenvalues (the scale of each direction) are what the methods tune: NCA's softmax has no
temperature but the metric's scale, and LMNN's unit margin fixes the scale against the pull
term.  Orthonormal L (or sL with one scale s) would force every kept direction to the same
weight — a different, smaller model than either paper's.  Both costs are invariant to
L → RL for orthogonal R (only LᵀL matters), which leaves the optimum a set; the Euclidean
solvers do not mind.

**Units.**  Neither cost is invariant to rescaling X at a fixed L (the softmax and the margin
see absolute squared distances), but both problems are equivariant: f(L; sX) = f(sL; X).  The
point M solved for is therefore Lᵀ **in units of the data's scale** c = √(tr S/d) (S the
biased covariance): ``M = c Lᵀ`` and L = Mᵀ/c (:meth:`components`).  The cost as a function
of M is then the same for X and sX, so solvers' iterates, tolerances and random starts do not
depend on the data's units; on data of unit mean variance (standardized without constant
features) c = 1 and M is scikit-learn's ``components_.T``.  Costs are reported at L, so they
equal scikit-learn's objective value at the same L.

**Start** (:meth:`heuristic`): scikit-learn's NCA ``init="auto"`` rule — LDA's scalings when
r ≤ min(d, C − 1), else PCA when r < min(d, n), else the identity — in units of c: LDA's
scalings are scale-equivariant and equal scikit-learn's start exactly; PCA and the identity
are orthonormal in M (scikit-learn's are orthonormal in L: the same when c = 1).

**Memory and time.**  Every evaluation forms n×n arrays (distances, p_ij or hinge
arguments): O(n²) memory, a few n×n float64 arrays at once (about 26 MB each for n = 1797,
scikit-learn's digits; LargeMarginDML keeps k + 2 of them per point, h″ for each target slot
for its Hessian), and O(n²(r + k)) time per cost, gradient or Hessian-vector product.
Fine to a few thousand samples, as scikit-learn's NCA (which has the same O(n²) footprint).
"""

from __future__ import annotations

import numbers

import numpy as np

from ldr.data.validation import check_data, check_labels, check_new_data
from ldr.errors import ParameterError
from ldr.objective import Method, Objective

__all__ = ["LargeMarginDML", "NCA"]

_INITS = ("auto", "lda", "pca", "identity")


def _check_r(r, d: int) -> int:
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 1 <= r <= d:
        raise ParameterError("r", f"the embedding dimension must be an integer with 1 <= r <= "
                         f"n_features = {d}, got {r!r}")
    return int(r)


def _laplacian_times(S: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Lap(S) U = diag(S1) U − S U for a symmetric S."""
    return S.sum(axis=1)[:, None] * U - S @ U


def _sym_laplacian_times(A: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Lap(A + Aᵀ) U without forming A + Aᵀ (two products with A instead of a transpose)."""
    return (A.sum(axis=1) + A.sum(axis=0))[:, None] * U - A @ U - A.T @ U


def _sqdist(U: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the rows of U (clipped at 0), in place."""
    sq = np.sum(U * U, axis=1)
    D = U @ U.T
    D *= -2.0
    D += sq[:, None]
    D += sq[None, :]
    np.maximum(D, 0.0, out=D)
    return D


def _ddist(U: np.ndarray, dU: np.ndarray) -> np.ndarray:
    """dD_ij = 2 (u_i − u_j)ᵀ(du_i − du_j), the directional derivative of _sqdist."""
    a = np.sum(U * dU, axis=1)
    dD = np.hstack([U, dU]) @ np.hstack([dU, U]).T  # B + Bᵀ, B = U dUᵀ, in one product
    dD -= a[:, None]
    dD -= a[None, :]
    dD *= -2.0
    return dD


class _MetricLearning(Objective):
    """Shared set-up: validated data in units of c, labels, the same-class mask, the start."""

    manifold = "euclidean"

    def __init__(self, X, y, r, init="auto"):
        X = check_data(X, "X")
        n, d = X.shape
        self.classes_, self.codes_ = check_labels(y, n, "y")
        self.r = _check_r(r, d)
        if not (isinstance(init, str) and init in _INITS):
            raise ParameterError("init", f"expected one of {_INITS}, got {init!r}")
        self.init = init
        self.shape = (d, self.r)
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        scale2 = float(np.mean(Xc * Xc))
        if not scale2 > 0:
            raise ParameterError("X", "every sample is the same point, so all distances are 0 and "
                             "there is no metric to learn; pass data with varying samples")
        self.unit_ = float(np.sqrt(scale2))
        self._Xs = Xc / self.unit_
        self.same_class_ = self.codes_[:, None] == self.codes_[None, :]
        self._same = self.same_class_.astype(float)
        self._cache_key: bytes | None = None
        self._cache: dict = {}

    @property
    def n_samples(self) -> int:
        return self._Xs.shape[0]

    def components(self, M) -> np.ndarray:
        """L = Mᵀ/c, the r×d map in the data's units (scikit-learn's ``components_``)."""
        return np.asarray(M, dtype=float).T / self.unit_

    def point(self, L) -> np.ndarray:
        """M = c Lᵀ for a map L (r×d, scikit-learn's ``components_`` layout)."""
        L = np.asarray(L, dtype=float)
        if L.shape != (self.r, self.shape[0]):
            raise ParameterError("L", f"expected shape {(self.r, self.shape[0])} (scikit-learn's "
                             f"components_ layout, r×d), got {L.shape}")
        return self.unit_ * L.T

    def transform(self, X, M):
        """x ↦ L x for the rows of X, uncentered as scikit-learn's NCA (``X @ L.T``)."""
        X = check_new_data(X, self.shape[0])
        return X @ self.components(M).T

    def heuristic(self) -> np.ndarray:
        """scikit-learn's ``init="auto"`` start (or the ``init`` asked for), in units of c
        (module docstring)."""
        n, d = self._Xs.shape
        r, init = self.r, self.init
        if init == "auto":
            n_classes = self.classes_.shape[0]
            if r <= min(d, n_classes - 1):
                init = "lda"
            elif r < min(d, n):
                init = "pca"
            else:
                init = "identity"
        if init == "lda":
            from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

            lda = LinearDiscriminantAnalysis(n_components=r).fit(self._Xs, self.codes_)
            return np.array(lda.scalings_[:, :r], dtype=float)
        if init == "pca":  # scikit-learn's PCA: right singular vectors of the centered data
            _, _, Vt = np.linalg.svd(self._Xs, full_matrices=False)
            V = Vt[:r].T
            rows = np.argmax(np.abs(V), axis=0)  # scikit-learn's sign rule (svd_flip)
            signs = np.sign(V[rows, np.arange(r)])
            return V * np.where(signs == 0, 1.0, signs)
        return np.eye(d, r)

    def _point_key(self, M) -> bytes:
        return np.ascontiguousarray(M, dtype=float).tobytes()


class NCA(_MetricLearning):
    """Neighbourhood components analysis: minimize −Σ_i p_i over M ∈ R^{d×r} (module docstring).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Data as rows (copied; ``X`` is not modified).
    y : array of shape (n_samples,)
        Class labels, at least two classes.
    r : int
        Embedding dimension, 1 ≤ r ≤ n_features (r = n_features learns a full-rank metric).
    init : {"auto", "lda", "pca", "identity"}
        Which start :meth:`heuristic` returns (scikit-learn's NCA names).

    Notes
    -----
    The cost equals −(scikit-learn's NCA objective) at L = Mᵀ/c; :meth:`objective_value`
    returns the positive value.

    ``default_solver`` is ``"trust-region"``, by measurement (BLAS on one thread, standardized
    data, r = 2, the :meth:`heuristic` start): it converged in 23 iterations on iris (0.13 s;
    conjugate gradient 189 iterations, 0.30 s; gradient 167, 0.26 s) and in 26 on wine (0.36 s;
    conjugate gradient was faster there, 0.03 s); on digits after 240 s none had converged
    (the supremum lies at ‖L‖ → ∞) and the trust region was highest (f = 1644.8; conjugate
    gradient 1628.4, gradient 1572.5; scikit-learn's L-BFGS stopped at 1570.0); from random
    starts on unstructured labels it converged where both first-order solvers ran out of
    1000 iterations.  ``benchmarks/bench_dml.py`` times it against scikit-learn.
    """

    method = Method("nca", "neighbourhood components analysis, −Σ_i p_i on R^{d×r}",
                    supervised=True, memory=lambda n, sizes: 8 * 6.2 * n**2)

    default_solver = "trust-region"

    def _state(self, M) -> dict:
        key = self._point_key(M)
        if key == self._cache_key:
            return self._cache
        U = self._Xs @ M
        P = _sqdist(U)
        np.fill_diagonal(P, np.inf)
        P -= P.min(axis=1, keepdims=True)  # row-wise stable softmax of −D, p_ii = 0
        np.negative(P, out=P)
        np.exp(P, out=P)
        P /= P.sum(axis=1, keepdims=True)
        p = np.einsum("ij,ij->i", P, self._same)
        self._cache_key, self._cache = key, {"U": U, "P": P, "p": p}
        return self._cache

    def objective_value(self, M) -> float:
        """f_NCA = Σ_i p_i at L = Mᵀ/c (scikit-learn's objective; −cost)."""
        return float(np.sum(self._state(M)["p"]))

    def cost(self, M) -> float:
        return -self.objective_value(M)

    def _A(self, st: dict) -> np.ndarray:
        """A_ij = p_ij (p_i − 1[z_i = z_j]) (module docstring), cached with the point."""
        if "A" not in st:
            A = st["P"] * st["p"][:, None]
            A -= st["P"] * self._same
            st["A"] = A
        return st["A"]

    def egrad(self, M) -> np.ndarray:
        st = self._state(M)
        return -2.0 * self._Xs.T @ _sym_laplacian_times(self._A(st), st["U"])

    def ehvp(self, M, V) -> np.ndarray:
        st = self._state(M)
        U, P, p = st["U"], st["P"], st["p"]
        dU = self._Xs @ V
        dP = _ddist(U, dU)  # dD, then dp_ij = p_ij (Σ_k p_ik dD_ik − dD_ij), in place
        q = np.einsum("ij,ij->i", P, dP)
        np.subtract(q[:, None], dP, out=dP)
        dP *= P
        dp = np.einsum("ij,ij->i", dP, self._same)
        dA = dP * (p[:, None] - self._same)
        dA += P * dp[:, None]
        return -2.0 * self._Xs.T @ (_sym_laplacian_times(dA, U)
                                    + _sym_laplacian_times(self._A(st), dU))


def huber_hinge(z: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Huberized hinge h(z) and its first two derivatives (module docstring)."""
    c = np.clip(z, 0.0, delta)
    h = c * c / (2.0 * delta) + np.maximum(z - delta, 0.0)
    dh = c / delta
    d2h = ((z > 0) & (z < delta)) / delta
    return h, dh, d2h


class LargeMarginDML(_MetricLearning):
    """Large-margin DML (LMNN's objective, survey Eq. 27, Huberized hinge) over M ∈ R^{d×r}.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Data as rows (copied; ``X`` is not modified).
    y : array of shape (n_samples,)
        Class labels, at least two classes.
    r : int
        Embedding dimension, 1 ≤ r ≤ n_features.
    k : int, default 3
        Target neighbours per sample (nearest same-class samples in the input space).
    lam : float > 0, default 1
        λ, the weight of the margin term (LMNN's μ/(1 − μ); λ = 1 is its usual μ = ½).
    smoothing : float > 0, default 0.5
        δ, the width of the Huberized hinge's quadratic piece, in the embedding's squared
        distance units (the margin is 1): half the margin, so the Hessian (1/δ on the
        active band) stays well conditioned while the cost is the hinge's minus δ/2 on
        every triple violating the margin by more than δ.
    init : {"auto", "lda", "pca", "identity"}
        Which start :meth:`heuristic` returns (scikit-learn's NCA rule, as :class:`NCA`).

    Notes
    -----
    ``default_solver`` is ``"trust-region"``, by measurement (BLAS on one thread, standardized
    data, r = 2, k = 3): 18 iterations, 0.31 s on iris (conjugate gradient 73, 0.60 s; gradient
    69, 0.66 s) and 14 iterations, 0.37 s on wine (137, 1.02 s; 160, 1.44 s), the same cost
    to 10 digits.
    """

    method = Method("lmnn", "large-margin DML (LMNN, smoothed hinge, 3 target neighbours) on "
                    "R^{d×r}", supervised=True, memory=lambda n, sizes: 8 * 13.6 * n**2)

    default_solver = "trust-region"

    def __init__(self, X, y, r, k=3, lam=1.0, smoothing=0.5, init="auto"):
        super().__init__(X, y, r, init)
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ParameterError(
                "k", f"the number of target neighbours must be a positive integer, "
                             f"got {k!r}")
        for name, value in (("lam", lam), ("smoothing", smoothing)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                    not (np.isfinite(value) and value > 0):
                raise ParameterError(name, f"must be a positive number, got {value!r}")
        self.k, self.lam, self.smoothing = int(k), float(lam), float(smoothing)
        self.targets_, self.target_mask_ = self._target_neighbours()
        self.impostor_mask_ = ~self.same_class_

    def _target_neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """(n×k indices, n×k validity): each sample's k nearest classmates in the input space."""
        n = self.n_samples
        T = np.tile(np.arange(n)[:, None], (1, self.k))
        valid = np.zeros((n, self.k), dtype=bool)
        for c in range(self.classes_.shape[0]):
            idx = np.flatnonzero(self.codes_ == c)
            m = min(self.k, idx.shape[0] - 1)
            if m < 1:
                continue
            from sklearn.neighbors import NearestNeighbors

            nn = NearestNeighbors(n_neighbors=m + 1).fit(self._Xs[idx])
            _, nbr = nn.kneighbors(self._Xs[idx])
            # drop each sample itself (the first neighbour, or wherever a duplicate put it)
            own = nbr == np.arange(idx.shape[0])[:, None]
            keep = np.where(own.any(axis=1)[:, None], ~own, np.arange(m + 1) < m)
            T[idx, :m] = idx[nbr[keep].reshape(idx.shape[0], m)]
            valid[idx, :m] = True
        return T, valid

    def _state(self, M) -> dict:
        key = self._point_key(M)
        if key == self._cache_key:
            return self._cache
        U = self._Xs @ M
        D = _sqdist(U)
        rows = np.arange(self.n_samples)
        n = self.n_samples
        W = np.zeros((n, n))
        cost = 0.0
        d2hs = []
        for t in range(self.k):
            valid = self.target_mask_[:, t]
            j = self.targets_[:, t]
            Dt = D[rows, j]
            Z = 1.0 + Dt[:, None] - D
            h, dh, d2h = huber_hinge(Z, self.smoothing)
            act = self.impostor_mask_ & valid[:, None]
            h, dh = h * act, dh * act
            cost += float(np.sum(Dt[valid])) + self.lam * float(np.sum(h))
            pull = valid + self.lam * dh.sum(axis=1)
            W -= self.lam * dh
            W[rows, j] += pull
            d2hs.append(d2h * act)
        self._cache_key = key
        self._cache = {"U": U, "D": D, "cost": cost, "W": W + W.T, "d2h": d2hs}
        return self._cache

    def cost(self, M) -> float:
        return self._state(M)["cost"]

    def egrad(self, M) -> np.ndarray:
        st = self._state(M)
        return 2.0 * self._Xs.T @ _laplacian_times(st["W"], st["U"])

    def ehvp(self, M, V) -> np.ndarray:
        st = self._state(M)
        U = st["U"]
        dU = self._Xs @ V
        dD = _ddist(U, dU)
        rows = np.arange(self.n_samples)
        W2 = np.zeros_like(dD)
        for t in range(self.k):
            j = self.targets_[:, t]
            G = st["d2h"][t] * (dD[rows, j][:, None] - dD)
            W2 -= self.lam * G
            W2[rows, j] += self.lam * G.sum(axis=1)
        return 2.0 * self._Xs.T @ (_laplacian_times(W2 + W2.T, U)
                                   + _laplacian_times(st["W"], dU))
