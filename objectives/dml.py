"""Low-rank linear distance metric learning (survey §3.2.5): NCA and large-margin DML.

Rows x_i of X are samples with class labels z_i.  A map L ∈ R^{r×d} (scikit-learn's
``components_`` layout) embeds u_i = L x_i and defines the distance
d_L(x_i, x_j)² = ‖L(x_i − x_j)‖² = ‖x_i − x_j‖²_{LᵀL}, a Mahalanobis metric of rank r.

**Neighbourhood components analysis** (Goldberger, Roweis, Hinton & Salakhutdinov 2004,
Eqs. 1–3; the objective scikit-learn's ``NeighborhoodComponentsAnalysis`` maximizes)::

    p_ij = exp(−D_ij) / Σ_{k≠i} exp(−D_ik),   p_ii = 0,   D_ij = ‖u_i − u_j‖²
    f_NCA(L) = Σ_i p_i,   p_i = Σ_{j: z_j = z_i} p_ij          (the expected number of
                                                              leave-one-out 1-NN successes)

a **sum** over samples, as scikit-learn's (not a mean).  The cost minimized is −f_NCA.  With
A_ij = p_ij (p_i − 1[z_i = z_j]), S = A + Aᵀ and Lap(S) = diag(S1) − S,

    ∂f_NCA/∂U = 2 Lap(S) U          (U = XLᵀ, n×r)

and the Hessian-vector product differentiates it once more (dD, dp_ij, dp_i, dA below).

**Large-margin DML** (LMNN, Weinberger & Saul 2009, as the survey's Eq. 27 writes it)::

    f_LM(L) = Σ_i Σ_{j∈η(i)} ( D_ij + λ Σ_ℓ 1[z_ℓ ≠ z_i] h(1 + D_ij − D_iℓ) )

with λ = ``impostor_weight`` and η(i) the k = ``n_neighbors`` **target neighbours** of x_i:
its k nearest same-class samples in the *input* space (Euclidean distance of X as given),
fixed once before the optimization, as LMNN does (a class with m ≤ k samples gives each of
them its m − 1 classmates).  The survey's hinge
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

**Memory and time.**  Up to ``DENSE_MAX`` samples NCA keeps one n×n float64 array per point
(the kernel K of ``objectives/_pairwise.py``; the Hessian-vector product forms three more),
and an evaluation costs n²/2 exponentials (K is symmetric) and a few passes over K — up to
``SMALL`` samples (r < 8) the plain row-stabilized softmax over the whole array instead (n²
exponentials, a third of the NumPy calls); beyond ``DENSE_MAX`` (or with ``block_size``) it
goes by strips of rows (``objectives/_nca.py``, n² exponentials, about ten strips of
max(32, 2¹⁶/n) rows).  The large-margin cost, gradient and Hessian go by strips of rows
(``objectives/_lmnn.py``) and keep no n×n array, at O(n²(r + k)) time.  Time, not memory,
limits both: one evaluation is n² pairs.

**Sums of terms.**  Both costs are sums over samples (:class:`~ldr.objective.Objective`,
Eq. S1), so the stochastic solvers run on them; :meth:`sample_batches` makes a batch's terms
an estimate from candidate sets (``objectives/_candidates.py``, Eq. C1) at O(b·(K + m))
pairs instead of O(b·n).

References: J. Goldberger, S. T. Roweis, G. E. Hinton, R. Salakhutdinov (2004),
"Neighbourhood components analysis", NIPS 17, 513–520; K. Q. Weinberger, L. K. Saul (2009),
"Distance metric learning for large margin nearest neighbor classification", JMLR 10,
207–244; J. P. Cunningham, Z. Ghahramani (2015), "Linear dimensionality reduction: survey,
insights, and generalizations", JMLR 16, 2859–2900, §3.2.5.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ldr.data.validation import check_data, check_labels, check_new_data
from ldr.errors import ParameterError
from ldr.objective import Method, Objective
from ldr.objectives._candidates import NEAREST_CANDIDATES, SAMPLED_COLUMNS, Candidates
from ldr.objectives._lmnn import large_margin, large_margin_sampled, lmnn_memory
from ldr.objectives._nca import DENSE_MAX, nca_memory, nca_sampled, nca_strips
from ldr.objectives._pairwise import (
    SMALL,
    WIDE,
    class_blocks,
    ddist,
    nca_laplacian_times,
    nca_probabilities,
    nca_softmax,
    same_class_mask,
    sym_laplacian_times,
)

__all__ = ["LargeMarginDML", "NCA"]

_INITS = ("auto", "lda", "pca", "identity")
#: the value of a deprecated parameter that was not given
_DEPRECATED = "deprecated"


def _given(value, old: str, new: str) -> bool:
    """Whether the deprecated parameter ``old`` of :class:`LargeMarginDML` was given (with a
    FutureWarning naming ``new``, its replacement with the same values)."""
    if isinstance(value, str) and value == _DEPRECATED:
        return False
    warnings.warn(f"LargeMarginDML({old}=...) is deprecated since ldr 0.2 and will be removed "
                  f"in the next release; pass {new}=... (the same values)", FutureWarning,
                  stacklevel=3)
    return True


def _check_r(r, d: int) -> int:
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 1 <= r <= d:
        raise ParameterError("r", f"the embedding dimension must be an integer with 1 <= r <= "
                         f"n_features = {d}, got {r!r}")
    return int(r)


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
        self._cache_key: bytes | None = None
        self._cache: dict = {}
        self._cand: Candidates | None = None
        self.n_terms = n

    def sample_batches(self, sample: int | None = SAMPLED_COLUMNS,
                       neighbours: int = NEAREST_CANDIDATES, seed: int = 0):
        """Make :meth:`batch` estimate each sample's term from a candidate set
        (``objectives/_candidates.py``, Eq. C1): its ``neighbours`` nearest samples in the
        embedding, exact, and ``sample`` columns drawn uniformly (seeded by ``seed`` and the
        batch), weighted n/``sample``; None: exact terms (every column).  Returns self."""
        self._cand = None if sample is None else Candidates(self.n_samples, neighbours,
                                                            sample, seed)
        return self

    def refresh_batches(self, M) -> None:
        """The stochastic solvers' epoch hook: recompute the candidates' neighbours at M."""
        if self._cand is not None:
            self._cand.refresh(self._sorted_X() @ M)

    def _sorted_X(self) -> np.ndarray:
        return self._Xo

    @property
    def n_samples(self) -> int:
        return self._Xs.shape[0]

    @property
    def same_class_(self) -> np.ndarray:
        """The n×n mask of same-class pairs (formed on request; the oracles never form it)."""
        return self.codes_[:, None] == self.codes_[None, :]

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

            try:
                lda = LinearDiscriminantAnalysis(n_components=r).fit(self._Xs, self.codes_)
                L = np.array(lda.scalings_[:, :r], dtype=float)
            except (IndexError, ValueError):  # no within-class spread at all: LDA's SVD is empty
                L = np.zeros((d, 0))
            if L.shape == (d, r) and np.all(np.isfinite(L)):
                return L
            # the classes span fewer than r directions (identical rows, one-sample classes):
            # scikit-learn's LDA fails or returns fewer scalings; start as "pca" would
            init = "pca" if r < min(d, n) else "identity"
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
    block_size : int, optional
        Rows per strip of the strip-by-strip oracles (``objectives/_nca.py``), which keep no
        n×n array.  None (default): one dense n×n kernel up to ``DENSE_MAX`` = 2048 samples,
        strips of max(32, 2¹⁶/n) rows beyond.

    Notes
    -----
    The cost equals −(scikit-learn's NCA objective) at L = Mᵀ/c; :meth:`objective_value`
    returns the positive value.  The cost is bounded (0 ≥ −f ≥ −n) but on data whose classes
    a map separates its infimum lies at ‖L‖ → ∞ (the map's scale is the softmax's only
    temperature): along the ray of such a map the gradient vanishes exponentially, so a run
    ends by the gradient rule or by a relative cost-change rule (``ftol``).

    ``default_solver`` is ``"lbfgs"`` (:class:`ldr.solvers.LBFGS`); the
    :class:`~ldr.estimators.NCA` estimator runs its route (:mod:`ldr.solvers.routes`) with
    the relative-progress stop.
    """

    method = Method("nca", "neighbourhood components analysis, −Σ_i p_i on R^{d×r}",
                    supervised=True, memory=lambda n, sizes: nca_memory(n))

    default_solver = "lbfgs"

    def __init__(self, X, y, r, init="auto", block_size: int | None = None):
        super().__init__(X, y, r, init)
        if block_size is not None and (isinstance(block_size, bool) or not isinstance(
                block_size, numbers.Integral) or block_size < 1):
            raise ParameterError("block_size", f"must be a positive integer, got {block_size!r}")
        self.block_size = block_size
        self._strips = block_size is not None or self.n_samples > DENSE_MAX
        # rows sorted by class: the same-class pairs are the diagonal blocks (_pairwise, P1)
        self._order, self._blocks = class_blocks(self.codes_)
        self._Xo = self._Xs[self._order]
        self._zo = self.codes_[self._order]
        # small tables: the plain softmax over the whole array with the same-class mask
        self._same = (same_class_mask(self._blocks, self.n_samples)
                      if not self._strips and self.n_samples <= SMALL and self.r < WIDE else None)

    def batch(self, M, indices):
        """The samples' terms of the cost (Eq. S1 of :class:`~ldr.Objective`), −Σ_{i∈I} p_i
        and its gradient, without an n×n array: with rows I of the n×n softmax (b × n, the
        rows sorted by class), A_ik = p_ik (p_i − 1[z_i = z_k]) = ∂p_i/∂D_ik and
        U = XM,

            ∂(Σ_{i∈I} p_i)/∂M = 2 (X_Iᵀ (diag(A1) U_I − A U) − Xᵀ (AᵀU_I − diag(Aᵀ1) U))

        (the sum of 2 A_ik (x_i − x_k)(x_i − x_k)ᵀM), at O(b·n·r + n·d·r) time.  Term i is
        the i-th sample in class order.  After :meth:`sample_batches`, the estimate (S3) of
        ``objectives/_nca.py``."""
        if self._cand is not None:
            f, G = nca_sampled(self._Xo, self._zo, M, indices, self._cand)
            return -f, -G
        idx = np.asarray(indices, dtype=np.intp)
        X = self._Xo
        U = X @ M
        Ub = U[idx]
        sq = np.einsum("ij,ij->i", U, U)
        D = sq[idx, None] + sq[None, :] - 2.0 * (Ub @ U.T)
        np.maximum(D, 0.0, out=D)
        D[np.arange(idx.shape[0]), idx] = np.inf  # p_ii = 0
        D -= D.min(axis=1, keepdims=True)
        P = np.exp(-D)
        P /= P.sum(axis=1, keepdims=True)
        same = self._zo[idx, None] == self._zo[None, :]
        p = np.where(same, P, 0.0).sum(axis=1)
        A = P * (p[:, None] - same)
        W1 = A.sum(axis=1)[:, None] * Ub - A @ U
        W2 = A.T @ Ub - A.sum(axis=0)[:, None] * U
        return -float(p.sum()), -2.0 * (X[idx].T @ W1 - X.T @ W2)

    def _state(self, M) -> dict:
        key = self._point_key(M)
        if key == self._cache_key:
            return self._cache
        if self._strips:
            f, G = nca_strips(self._Xo @ M, self._zo, step=self.block_size)
            self._cache_key, self._cache = key, {"f": f, "egrad": -self._Xo.T @ G}
            return self._cache
        self._cache_key, self._cache = key, nca_softmax(self._Xo @ M, self._blocks,
                                                        self._same)
        return self._cache

    def objective_value(self, M) -> float:
        """f_NCA = Σ_i p_i at L = Mᵀ/c (scikit-learn's objective; −cost)."""
        st = self._state(M)
        return st["f"] if "f" in st else float(st["p"].sum())

    def cost(self, M) -> float:
        return -self.objective_value(M)

    def egrad(self, M) -> np.ndarray:
        st = self._state(M)
        if "egrad" not in st:
            st["egrad"] = -2.0 * self._Xo.T @ nca_laplacian_times(st, st["U"], self._blocks)
        return st["egrad"].copy()

    def ehvp(self, M, V) -> np.ndarray:
        if self._strips:
            return -self._Xo.T @ nca_strips(self._Xo @ M, self._zo, self._Xo @ V,
                                            step=self.block_size)
        st = self._state(M)
        U, p = st["U"], st["p"]
        P = nca_probabilities(st)
        dU = self._Xo @ V
        dP = ddist(U, dU)  # dD, then dp_ij = p_ij (Σ_k p_ik dD_ik − dD_ij), in place
        q = np.einsum("ij,ij->i", P, dP)
        np.subtract(q[:, None], dP, out=dP)
        dP *= P
        dp = np.empty_like(p)
        for b in self._blocks:
            dp[b] = dP[b, b].sum(axis=1)
        # dA_ij = dp_ij (p_i − 1[z_i = z_j]) + p_ij dp_i, with p_i − 1 = −q_i in the blocks
        dA = dP * p[:, None]
        for b in self._blocks:
            dA[b, b] = dP[b, b] * -st["q"][b, None]
        dA += P * dp[:, None]
        return -2.0 * self._Xo.T @ (sym_laplacian_times(dA, U)
                                    + nca_laplacian_times(st, dU, self._blocks))


class LargeMarginDML(_MetricLearning):
    """Large-margin DML (LMNN's objective, the survey's Eq. 27, with a Huberized hinge) over
    M ∈ R^{d×r} (module docstring).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Data as rows (copied; ``X`` is not modified).
    y : array of shape (n_samples,)
        Class labels, at least two classes.
    r : int
        Embedding dimension, 1 ≤ r ≤ n_features.
    n_neighbors : int, default 3
        k, the target neighbours per sample (nearest same-class samples in the input space).
    impostor_weight : float > 0, default 1
        λ, the weight of the margin (impostor) term (LMNN's μ/(1 − μ); λ = 1 is its usual
        μ = ½).
    smoothing : float > 0, default 0.5
        δ, the width of the Huberized hinge's quadratic piece, in the embedding's squared
        distance units (the margin is 1): half the margin, so the Hessian (1/δ on the
        active band) stays well conditioned while the cost is the hinge's minus δ/2 on
        every triple violating the margin by more than δ.
    init : {"auto", "lda", "pca", "identity"}
        Which start :meth:`heuristic` returns (scikit-learn's NCA rule, as :class:`NCA`).
    k, lam : deprecated
        The former names of ``n_neighbors`` and ``impostor_weight``; each warns (a
        FutureWarning) and is used when given; removed in the next release.

    Attributes
    ----------
    n_neighbors, impostor_weight, smoothing : int, float, float
        The validated parameters.
    targets_, target_mask_ : (n_samples, n_neighbors)
        Each sample's target neighbours (indices into X's rows) and which slots are valid (a
        class of m ≤ k samples gives each of them m − 1).

    Notes
    -----
    ``default_solver`` is ``["lbfgs", "trust-region"]``: L-BFGS (:class:`ldr.solvers.LBFGS`),
    whose certified answer ends the chain (:mod:`ldr.driver`), and the trust region, whose
    second-order steps certify the minimizer where L-BFGS ends uncertified (a budget or a
    stall).
    """

    method = Method("lmnn", "large-margin DML (LMNN, smoothed hinge, 3 target neighbours) on "
                    "R^{d×r}", supervised=True, memory=lmnn_memory)

    default_solver = ["lbfgs", "trust-region"]

    def __init__(self, X, y, r, n_neighbors=3, impostor_weight=1.0, smoothing=0.5,
                 init="auto", *, k=_DEPRECATED, lam=_DEPRECATED):
        super().__init__(X, y, r, init)
        if _given(k, "k", "n_neighbors"):
            n_neighbors = k
        if _given(lam, "lam", "impostor_weight"):
            impostor_weight = lam
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral) \
                or n_neighbors < 1:
            raise ParameterError("n_neighbors", f"the number of target neighbours must be a "
                                 f"positive integer, got {n_neighbors!r}")
        for name, value in (("impostor_weight", impostor_weight), ("smoothing", smoothing)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                    not (np.isfinite(value) and value > 0):
                raise ParameterError(name, f"must be a positive number, got {value!r}")
        self.n_neighbors = int(n_neighbors)
        self.impostor_weight = float(impostor_weight)
        self.smoothing = float(smoothing)
        self.targets_, self.target_mask_ = self._target_neighbours()

    @property
    def impostor_mask_(self) -> np.ndarray:
        """The n×n mask of other-class pairs, the candidate impostors (formed on request)."""
        return ~self.same_class_

    def _target_neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """(n×k indices, n×k validity): each sample's k nearest classmates in the input space."""
        n = self.n_samples
        T = np.tile(np.arange(n)[:, None], (1, self.n_neighbors))
        valid = np.zeros((n, self.n_neighbors), dtype=bool)
        for c in range(self.classes_.shape[0]):
            idx = np.flatnonzero(self.codes_ == c)
            m = min(self.n_neighbors, idx.shape[0] - 1)
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

    def _sorted(self) -> tuple:
        """X, targets and their validity with the rows sorted by class (built once)."""
        if "_Xo" not in self.__dict__:
            order, self._blocks = class_blocks(self.codes_)
            position = np.empty_like(order)
            position[order] = np.arange(order.shape[0])
            self._Xo = self._Xs[order]
            self._To = position[self.targets_[order]]
            self._vo = self.target_mask_[order].astype(float)
            self._zo = self.codes_[order]
        return self._Xo, self._To, self._vo

    def _sorted_X(self) -> np.ndarray:
        return self._sorted()[0]

    def batch(self, M, indices):
        """The samples' terms f_i of (M1) (``objectives/_lmnn.py``) and their gradient, term
        i the i-th sample in class order: exact (every impostor column, O(b·k·n) memory), or
        after :meth:`sample_batches` the unbiased estimate (M3) from candidate sets."""
        X, T, v = self._sorted()
        cand = self._cand or Candidates(self.n_samples, 0, self.n_samples)
        return large_margin_sampled(X, self._zo, T, v, M, indices, cand, self.impostor_weight,
                                    self.smoothing)

    def _state(self, M) -> dict:
        key = self._point_key(M)
        if key == self._cache_key:
            return self._cache
        X, T, v = self._sorted()
        cost, GU = large_margin(X @ M, T, v, self._blocks, self.impostor_weight, self.smoothing)
        self._cache_key, self._cache = key, {"cost": cost, "GU": GU}
        return self._cache

    def cost(self, M) -> float:
        return self._state(M)["cost"]

    def egrad(self, M) -> np.ndarray:
        GU = self._state(M)["GU"]
        return self._Xo.T @ GU

    def ehvp(self, M, V) -> np.ndarray:
        X, T, v = self._sorted()
        return X.T @ large_margin(X @ M, T, v, self._blocks, self.impostor_weight, self.smoothing,
                                  dU=X @ V)
