"""Low-rank linear distance metric learning (the survey's §3.2.5): what NCA
(``objectives/nca.py``) and the large-margin objective (``objectives/lmnn.py``) share.

Rows x_i of X are samples with class labels z_i.  A map L ∈ R^{r×d} (scikit-learn's
``components_`` layout) embeds u_i = L x_i and defines the distance
d_L(x_i, x_j)² = ‖L(x_i − x_j)‖² = ‖x_i − x_j‖²_{LᵀL}, a Mahalanobis metric of rank r; both
costs are functions of the squared distances D_ij = ‖u_i − u_j‖² and sums over the samples
(:class:`~ldr.core.objective.Objective`, Eq. S1), so their gradients have the Laplacian form
∂f/∂U = 2 Lap(W + Wᵀ) U (U = XLᵀ, Lap(S) = diag(S1) − S) for the pair weights
W_ij = ∂f/∂D_ij.

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
biased covariance): ``M = c Lᵀ`` and L = Mᵀ/c (:meth:`MetricLearning.components`).  The cost
as a function of M is then the same for X and sX, so solvers' iterates, tolerances and random
starts do not depend on the data's units; on data of unit mean variance (standardized without
constant features) c = 1 and M is scikit-learn's ``components_.T``.  Costs are reported at
L, so they equal scikit-learn's objective value at the same L.

**Start** (:meth:`MetricLearning.heuristic`): scikit-learn's NCA ``init="auto"`` rule — LDA's
scalings when r ≤ min(d, C − 1), else PCA when r < min(d, n), else the identity — in units of
c: LDA's scalings are scale-equivariant and equal scikit-learn's start exactly; PCA and the
identity are orthonormal in M (scikit-learn's are orthonormal in L: the same when c = 1).
A start asked for by name (``"pca"``, ``"identity"``) is scikit-learn's own map (L = V,
L = I), so that ``start="identity"`` transforms X to X.

**Sampled batches.**  :meth:`MetricLearning.sample_batches` makes a batch's terms an estimate
from candidate sets (``objectives/candidates.py``, Eq. C1) at O(b·(K + m)) pairs instead of
O(b·n): the stochastic solvers' batches at large n.

**Rows out of memory.**  X may be a Dask array or a memmap where the objective
``reads_chunks`` (NCA): one pass over the chunks gives the mean, the scale c and the class
scatters (LDA's start: the leading generalized eigenvectors of (S_b, S_w)); an exact
evaluation is two passes, U = X̃M and X̃ᵀG (``objectives/chunked_rows.py``); sampled batches
take one chunk at a time (:class:`~ldr.objectives.candidates.ChunkCandidates`).

Reference: J. P. Cunningham, Z. Ghahramani (2015), "Linear dimensionality reduction: survey,
insights, and generalizations", JMLR 16, 2859–2900, §3.2.5.
"""

from __future__ import annotations

import numbers

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.objective import Objective
from ldr.data import arrays
from ldr.data.rows import lazy_rows, moments
from ldr.data.validation import check_data, check_labels, check_rows, is_lazy, refuse_lazy
from ldr.objectives.candidates import (
    NEAREST_CANDIDATES,
    POOL_COLUMNS,
    SAMPLED_COLUMNS,
    Candidates,
    ChunkCandidates,
)
from ldr.objectives.chunked_rows import ChunkedRows

#: the family's objectives are exported by their own modules (``nca.py``, ``lmnn.py``)
__all__: list[str] = []

_INITS = ("auto", "lda", "pca", "identity")


def _check_r(r, d: int) -> int:
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 1 <= r <= d:
        raise ParameterError("r", f"the embedding dimension must be an integer with 1 <= r <= "
                         f"n_features = {d}, got {r!r}")
    return int(r)


class MetricLearning(Objective):
    """The shared set-up of the metric-learning objectives (module docstring): the data in
    units of c, the labels, the start, and the map's two layouts.

    Parameters
    ----------
    X : array of shape (n_samples, n_features), Dask array or np.memmap
        Data as rows (copied; ``X`` is not modified).  A Dask array or memmap is read a
        chunk at a time (``objectives/chunked_rows.py``: one pass for the mean, the scale and
        the class scatters; sampled batches from one chunk at a time; an exact evaluation in
        two passes over U = X̃M), where the objective ``reads_chunks``.  An array of another
        namespace (a PyTorch tensor, CuPy) stays there, on its device: the oracles compute
        there, and the start is read from its class scatters (d×d, on the host).
    y : array of shape (n_samples,)
        Class labels, at least two classes (a Dask array's are computed).
    r : int
        Embedding dimension, 1 ≤ r ≤ n_features.
    init : {"auto", "lda", "pca", "identity"}
        Which start :meth:`heuristic` returns (scikit-learn's NCA names).

    Attributes
    ----------
    classes_ : (n_classes,)
        The class labels; ``codes_`` (n_samples,) each sample's index into them.
    r, shape : int, (n_features, r)
        The embedding dimension and the point's shape.
    mean_ : (n_features,)
        The training mean (the scale c is measured about it; the transform does not center).
    unit_ : float
        c, the data's RMS scale: M = c Lᵀ.
    n_terms : int
        The number of terms of the sum (n_samples).
    """

    manifold = "euclidean"
    #: the fewest classes the objective is defined for
    min_classes = 2
    #: whether X may be rows read a chunk at a time (a Dask array or memmap)
    reads_chunks = True

    def __init__(self, X, y, r, start="auto"):
        lazy = is_lazy(X) or (isinstance(X, np.memmap) and self.reads_chunks)
        if lazy and not self.reads_chunks:
            refuse_lazy(X, "X", type(self).__name__, pairwise=True)
        if lazy:
            X = lazy_rows(X, "X")
            y = y.compute() if is_lazy(y) else y
        else:   # rows of another namespace (a PyTorch tensor, ...) stay there
            X = check_rows(X, "X") if arrays.foreign(X) is not None else check_data(X, "X")
        n, d = X.shape
        foreign = not lazy and arrays.foreign(X) is not None
        if arrays.foreign(y) is not None:   # labels are read on the host (as scikit-learn's)
            y = arrays.to_host(y)
        self.classes_, self.codes_ = check_labels(y, n, "y", self.min_classes)
        self.r = _check_r(r, d)
        if not (isinstance(start, str) and start in _INITS):
            raise ParameterError("start", f"expected one of {_INITS}, got {start!r}")
        self.start = start
        self.shape = (d, self.r)
        self._moments = None
        self._rows: ChunkedRows | None = None
        if lazy or foreign:   # one pass (over the chunks, or in X's namespace): the mean,
            # the scale and the class scatters the start reads (d×d, to the host)
            self._moments = moments(X, self.codes_, name="X", validated=foreign).on_host()
            self.mean_ = self._moments.mean
            scale2 = float(np.trace(self._moments.scatter)) / (n * d)
        else:
            self.mean_ = X.mean(axis=0)
            Xc = X - self.mean_
            scale2 = float(np.mean(Xc * Xc))
        if not scale2 > 0:
            raise ParameterError("X", "every sample is the same point, so all distances are 0 and "
                             "there is no metric to learn; pass data with varying samples")
        self.unit_ = float(np.sqrt(scale2))
        if lazy:
            self._rows = ChunkedRows(X, self.mean_, self.unit_)
            self._Xs = None
        elif foreign:
            self._Xs = (X - arrays.like(self.mean_, X)) / self.unit_
        else:
            self._Xs = Xc / self.unit_
        self._cache_key: bytes | None = None
        self._cache: dict = {}
        self._cand: Candidates | ChunkCandidates | None = None
        self.n_terms = n

    def sample_batches(self, sample: int | None = SAMPLED_COLUMNS,
                       neighbours: int = NEAREST_CANDIDATES, seed: int = 0,
                       pool: int | None = None):
        """Make :meth:`batch` estimate each sample's term from a candidate set
        (``objectives/candidates.py``, Eq. C1): its ``neighbours`` nearest samples in the
        embedding, exact, and ``sample`` columns drawn uniformly (seeded by ``seed`` and the
        batch), weighted n/``sample``; None: exact terms (every column).  Rows read a chunk
        at a time take their candidates from the batch's chunk and their columns from a pool of
        ``pool`` rows (None: ``POOL_COLUMNS``;
        :class:`~ldr.objectives.candidates.ChunkCandidates`).  Returns self."""
        if self._rows is not None:
            if sample is None:
                raise ParameterError("sample", "rows read a chunk at a time (a Dask array or "
                                     "memmap) take sampled batches: an exact term reads all n "
                                     "rows")
            self._cand = ChunkCandidates(self._rows, self._sorted_codes(), neighbours, sample,
                                         POOL_COLUMNS if pool is None else pool, seed)
            return self
        self._cand = None if sample is None else Candidates(self.n_samples, neighbours,
                                                            sample, seed)
        return self

    def batch_order(self, rng: np.random.Generator, batch_size: int):
        """The stochastic solvers' epoch order: for rows read a chunk at a time, batches from
        one chunk at a time (:meth:`~ldr.objectives.candidates.ChunkCandidates.batch_order`);
        None (a uniform permutation) for rows in memory."""
        if isinstance(self._cand, ChunkCandidates):
            return self._cand.batch_order(rng, batch_size)
        return None

    def refresh_batches(self, M) -> None:
        """The stochastic solvers' epoch hook: recompute the candidates' neighbours at M."""
        if isinstance(self._cand, ChunkCandidates):
            self._cand.refresh(M)
        elif self._cand is not None:
            self._cand.refresh(self._sorted_X(), M)

    def hold_terms(self, terms) -> None:
        """The stochastic solvers' hook for a fixed sample of terms evaluated repeatedly (a
        sampled start): rows read a chunk at a time gather them once
        (:meth:`~ldr.objectives.candidates.ChunkCandidates.hold`); None drops them.  Rows in
        memory need nothing."""
        if isinstance(self._cand, ChunkCandidates):
            self._cand.hold(None if terms is None else np.sort(np.asarray(terms)))

    def release_batches(self) -> None:
        """After a fit: rows read a chunk at a time drop the chunk they hold."""
        if isinstance(self._cand, ChunkCandidates):
            self._cand.release()

    def _candidate_rows(self, M, indices):
        """The batch's candidate rows (the ``rows`` of NCA's sampled term,
        ``objectives/nca.py``)."""
        if isinstance(self._cand, ChunkCandidates):
            return self._cand.rows(indices, M)
        return self._cand.rows(self._sorted_X(), self._sorted_codes(), indices, M)

    def _sorted_X(self) -> np.ndarray:
        return self._Xo

    def _sorted_codes(self) -> np.ndarray:
        return self.codes_

    def _embed(self, M) -> np.ndarray:
        """U = X̃M for the rows in the objective's order (one pass over chunked rows)."""
        return self._sorted_X() @ M if self._rows is None else self._rows.embed(M)

    def _tdot(self, G) -> np.ndarray:
        """X̃ᵀG for G in the objective's row order."""
        return self._sorted_X().T @ G if self._rows is None else self._rows.tdot(G)

    @property
    def n_samples(self) -> int:
        return self.n_terms

    @property
    def same_class_(self) -> np.ndarray:
        """The n×n mask of same-class pairs (formed on request; the oracles never form it)."""
        return self.codes_[:, None] == self.codes_[None, :]

    def components(self, M) -> np.ndarray:
        """L = Mᵀ/c, the r×d map in the data's units (scikit-learn's ``components_``)."""
        return np.asarray(arrays.to_host(M), dtype=float).T / self.unit_

    def point(self, L) -> np.ndarray:
        """M = c Lᵀ for a map L (r×d, scikit-learn's ``components_`` layout)."""
        L = np.asarray(L, dtype=float)
        if L.shape != (self.r, self.shape[0]):
            raise ParameterError("L", f"expected shape {(self.r, self.shape[0])} (scikit-learn's "
                             f"components_ layout, r×d), got {L.shape}")
        return self.unit_ * L.T

    def linear_map(self, M):
        """x ↦ L x, uncentered as scikit-learn's NCA (``X @ L.T``)."""
        return None, self.components(M).T

    def heuristic(self) -> np.ndarray:
        """scikit-learn's ``init="auto"`` rule in units of c (module docstring), or the start
        asked for by name, which is scikit-learn's own: ``"identity"`` is the map L = I
        (M = c I), so that ``transform(X)`` is X, and ``"pca"`` the map whose rows are the
        principal axes (M = c V); under ``"auto"`` the same two are orthonormal in M
        (L = I/c, V/c), so that the start of c·X is the start of X."""
        n = self.n_terms
        d = self.shape[0]
        r = self.r
        init = self.start
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
                if self._moments is None:
                    lda = LinearDiscriminantAnalysis(n_components=r).fit(*self._held_rows())
                    L = np.array(lda.scalings_[:, :r], dtype=float)
                else:
                    L = self._moments_lda()
            except (IndexError, ValueError):  # no within-class spread at all: LDA's SVD is empty
                L = np.zeros((d, 0))
            if L.shape == (d, r) and np.all(np.isfinite(L)):
                return L
            # the classes span fewer than r directions (identical rows, one-sample classes):
            # scikit-learn's LDA fails or returns fewer scalings; start as "pca" would
            init = "pca" if r < min(d, n) else "identity"
        if init == "pca":  # scikit-learn's PCA: right singular vectors of the centered data
            if self._moments is None:
                _, _, Vt = np.linalg.svd(self._held_rows()[0], full_matrices=False)
                V = Vt[:r].T
            else:   # the covariance's leading eigenvectors (the same axes)
                V = np.linalg.eigh(self._moments.covariance())[1][:, ::-1][:, :r]
            rows = np.argmax(np.abs(V), axis=0)  # scikit-learn's sign rule (svd_flip)
            signs = np.sign(V[rows, np.arange(r)])
            V = V * np.where(signs == 0, 1.0, signs)
            return V * (self.unit_ if self.start == "pca" else 1.0)
        return np.eye(d, r) * (self.unit_ if self.start == "identity" else 1.0)

    def _held_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The standardized rows in memory and their class codes (in the objective's own
        order where it keeps only that copy)."""
        if self._Xs is not None:
            return self._Xs, self.codes_
        return self._sorted_X(), self._sorted_codes()

    def _moments_lda(self) -> np.ndarray:
        """LDA's directions from the class scatters (of the chunks, or of rows of another
        namespace), in units of c: the leading generalized eigenvectors of (S_b, S_w),
        S_w-orthonormal (within-class variance 1 along each) — scikit-learn's scalings up to
        their signs, which no cost of the family sees (only LᵀL matters); fewer than r (the
        "pca" fallback) when S_w is singular or the classes span fewer directions."""
        import scipy.linalg

        Sw, Sb, _ = self._moments.class_scatter()
        c2 = self.unit_**2
        try:
            lam, V = scipy.linalg.eigh(Sb / c2, Sw / c2)
        except np.linalg.LinAlgError:
            return np.zeros((self.shape[0], 0))
        keep = lam[::-1] > 1e-12 * max(lam[-1], 1e-300)
        return V[:, ::-1][:, keep][:, :self.r]

    def _point_key(self, M) -> bytes:
        return np.ascontiguousarray(arrays.to_host(M), dtype=float).tobytes()
