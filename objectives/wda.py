"""Wasserstein discriminant analysis (Flamary et al. 2018; Liu, Cai, Chen & Li, ratio trace).

Classes c with samples X^c (rows, centered per feature).  For every pair of classes c ≤ c′ an
entropic transport plan T^{c,c′}(P) between X^cP and X^{c′}P with uniform weights, cost
M_ij = ‖Pᵀ(x_i − x_j)‖² and kernel K = exp(−M/reg) — the regularization is named and scaled
as in POT (``reg``; the papers' λ is 1/reg) — computed by a fixed number of Sinkhorn
iterations from u = 1.  Then

    C^{c,c′} = Σ_ij T_ij (x_i − x_j)(x_i − x_j)ᵀ,   C_b = Σ_{c<c′} C^{c,c′},   C_w = Σ_c C^{c,c},

Sinkhorn runs in the log domain (potentials), its products with a stored, re-centred
reference kernel or by row blocks (:mod:`ldr.objectives.transport`), so it never overflows.

``normalize_at=P0`` is POT's ``ot.dr.wda(..., P0=P0, normalize=True)``: the plan of each pair
of classes (c, c′), within-class pairs included, uses the regularization

    reg_{c,c′} = reg · (1 / (n_c n_{c′})) Σ_{i∈c, j∈c′} ‖P0ᵀ(x_i − x_j)‖²,

the mean squared distance between the two classes' samples projected by P0 (the matrix as
given, not orthonormalized, as in POT), fixed for the whole run — so ``reg`` becomes relative
to each pair's spread.

* ``cost``   the trace ratio −tr(PᵀC_bP)/tr(PᵀC_wP) with T = T(P) (Flamary et al.), whose
  gradient differentiates through the Sinkhorn iterations, as they do — by a hand-written
  reverse pass in the log domain that recomputes the iterates from their potentials
  (checkpointing: memory independent of ``sinkhorn_iter``), a pair's kernel stored when it
  fits half of ``memory_budget`` and otherwise recomputed by row blocks
  (:mod:`ldr.objectives.transport`); Hessian-vector products by the complex step through
  that pass (exact to rounding); ``batch_size`` replaces each pair's plan by the mean of
  ``n_batches`` plans between fixed random mini-batches (mini-batch OT, Fatras et al. 2020;
  batch j of a class is the same in all its pairs);
* ``pencil`` (C_b(T(P)), C_w(T(P)) + εI): the ratio-trace NLEP C_b(P)V = C_w(P)VΛ of Liu et al.,
  solved by SCF (``ldr.solvers.SCF``).

Both depend on P only through PPᵀ: the manifold is Grassmann.

Defaults (``ldr.solve(WDA(...))``): the chain SCF → trust region from SCF's own start, the
top-p generalized eigenvectors of the pencil at the answer of ``coarse_problem()``:
continuation in reg — the driver first solves the smoother problem with reg × 10
(``continuation``) by SCF from its whole-space pencil (P = I_d: the
plans in the original metric, before any projection), and the pencil at that fixed point
starts the problem itself.  The ratio trace has poor fixed points (a signal and a noise
direction); regularized FDA (``heuristic``) sees the class means only, and the smoother
problem's plans see the classes' shapes, which is why its fixed point is the start (the
measurements are on the documentation's WDA benchmark page).  The trust region then
maximizes the trace ratio itself from that basin.

**A singular within-class scatter.**  S_w has m > 0 null directions when some direction has
no within-class spread (a feature constant within each class, collinear features, fewer
samples than features).  The plans are entropic, every entry of T positive, so C_w(T) has
the same null space as S_w, whatever P.  While m < r every r-dimensional subspace keeps
some within-class spread, tr(PᵀC_wP) > 0, and the trace ratio is bounded: the objective is
the papers' own, and its maximizer keeps the null directions that C_b sees — the
directions along which every class is a point are the most discriminative ones (the
ratio-trace pencil C_w + εI gives them eigenvalues of order 1/ε, so SCF takes them first).
With m ≥ r the ratio is unbounded on a subspace of them and the objective refuses the data
(``n_null_directions`` holds m).

**Rows from chunks.**  With mini-batches the plans see only the batches' rows: a Dask array
or ``np.memmap`` X is read once over its chunks for the means and Fisher's scatters
(:func:`ldr.data.rows.moments`: ``mean_``, ``reg="auto"``, the heuristic), and the rows its
batches hold are gathered (:func:`ldr.data.rows.take_rows`); nothing of X's size is made.
Rows in memory are held the same way: the groups copy only the batches' rows (without
``normalize_at``, whose class spreads need every row), and :meth:`WDA.full_data` reads X
again for the exact plans.

References
----------
Flamary, Cuturi, Courty & Rakotomamonjy (2018), Wasserstein discriminant analysis, Machine
Learning 107.  Liu, Cai, Chen & Li, Ratio trace formulation of Wasserstein discriminant
analysis (NeurIPS 2020).  Fatras, Zine, Flamary, Gribonval & Courty (2020), Learning with
minibatch Wasserstein, AISTATS.
"""

from __future__ import annotations

import copy
import warnings

import autograd.numpy as anp
import numpy as np

from ldr.core.deprecation import renamed_value
from ldr.core.eigen import top_generalized
from ldr.core.errors import ParameterError, UnboundedObjective
from ldr.core.objective import Method, Objective
from ldr.data import arrays
from ldr.data.rows import moments, take_rows
from ldr.data.statistics import check_weights
from ldr.data.validation import (
    check_labels,
    check_rank,
    check_rows,
    is_lazy,
    nullity,
)
from ldr.kernels.tiles import DEFAULT_MEMORY_BUDGET, TARGET_BLOCK_BYTES
from ldr.objectives import transport

__all__ = ["WDA", "within_reg"]


def within_reg(spread: float, r: int, d: int) -> float:
    """WDA's "auto" regularization (:class:`WDA`'s ``reg``): (r/d) · s, where
    s = 2 tr(S_w) = (2/n) Σ_c Σ_{i∈c} ‖x_i − m_c‖² is the mean squared distance between two
    samples of one class in the d features (S_w the within-class scatter divided by n); the
    same distance expected in an r-dimensional projection."""
    if not spread > 0:
        raise ParameterError("X", "every class is a single point: there is no within-class "
                                  "spread to set reg='auto' by; pass a number")
    return r / d * float(spread)


def held_rows(drawn: list, counts) -> list:
    """Each class's positions (within the class, sorted) that some mini-batch of ``drawn``
    holds (:meth:`WDA._draw_batches`): every position where a batch takes the whole class."""
    held = []
    for c, count in enumerate(counts):
        picks = [rows[c] for rows in drawn]
        held.append(np.arange(count) if any(p is None for p in picks)
                    else np.unique(np.concatenate(picks)))
    return held


def renumbered(drawn: list, held: list) -> list:
    """The batches ``drawn`` as positions within each class's held rows (:func:`held_rows`)."""
    return [[None if p is None else np.searchsorted(h, p) for p, h in zip(batch, held)]
            for batch in drawn]


def wda_memory(n: int, sizes, memory_budget: float = DEFAULT_MEMORY_BUDGET,
               sinkhorn_iter: int = 10) -> float:
    """Peak bytes of WDA's oracles beyond the data (:attr:`ldr.core.objective.Method.memory`),
    for the largest pair of classes (s rows each) in complex arithmetic (the complex-step
    HVP: 16 bytes an entry; the gradient's 8 may fit where those do not): the reference
    kernel if it fits half the budget, two row-block
    buffers of at most ``TARGET_BLOCK_BYTES``, and the 2·sinkhorn_iter + 2 potentials."""
    s = max(sizes) if sizes else n
    pair = 16.0 * s * s
    kernel = max([b * s * s for b in (8.0, 16.0) if b * s * s <= 0.5 * memory_budget] or [0])
    block = min(pair, TARGET_BLOCK_BYTES, max(0.25 * memory_budget, 16.0 * s))
    return kernel + 2 * block + 16.0 * 2 * s * (2 * sinkhorn_iter + 8)


class WDA(Objective):
    """Wasserstein discriminant analysis on Grassmann(d, r).

    Parameters
    ----------
    X : (n, d) data; y : (n,) labels, at least two classes of at least two samples each.
        X of another array namespace (a PyTorch tensor on the CPU or a GPU, CuPy, JAX, ...)
        keeps the classes' rows there, in its float dtype: plans, cost, gradient, HVPs and
        pencil are computed there, ``ldr.solve`` iterates there (float32: SCF xtol ≈ 1e-5).
        A Dask array or ``np.memmap`` with ``batch_size`` is read over its chunks (module
        docstring, "Rows from chunks"); the labels are read into memory
    r : subspace dimension, 1 ≤ r < d (the papers' p; ``p=`` is a deprecated alias)
    reg : float > 0 or "auto", default "auto"
        The entropic regularization, in squared-distance units, as in POT
        (K = exp(−M/reg); the WDA papers' λ = 1/reg); a number is used as given.  "auto" is
        the within-class spread of the data in an r-dimensional projection,

            reg = (r/d) · (2/n) Σ_c Σ_{i∈c} ‖x_i − m_c‖² = (r/d) · 2 tr(S_w),

        (S_w the within-class scatter divided by n): the mean squared distance between two
        samples of one class, each class's transport cost onto itself under the uniform
        plan, averaged over r-dimensional subspaces (E‖Pᵀv‖² = (r/d)‖v‖² for a uniformly
        random P).  It is the scale the papers' λ balances between the global and the local
        interactions of the classes (Liu et al., Sec. 2): far below it the plans within a
        class approach the identity and the within-class scatter vanishes, far above it the
        plans approach the uniform one and WDA approaches Fisher's LDA.  It follows the
        data's units: the objective of c·X is that of X (``reg`` scaled by c²).  With
        ``normalize_at``, "auto" is 1: each pair's own mean squared distance.
    sinkhorn_iter : fixed number of Sinkhorn iterations (POT's ``wda`` uses 10)
    ridge : the pencil's C_w + εI uses ε = ridge · tr(C_w)/d (relative, so scale-free)
    continuation : float ≥ 1
        SCF's own start is the pencil at the ratio-trace fixed point of the smoother problem
        with reg × ``continuation`` (``coarse_problem``, solved by the driver from its
        whole-space pencil: continuation in reg); 1 uses the whole-space pencil directly.
    normalize_at : (d, p) array, optional
        POT's ``normalize=True`` with ``P0 = normalize_at``: each pair's reg is scaled by the
        mean squared distance between its classes projected by this matrix (module
        docstring; ``pair_reg`` holds the results).  None (default): ``reg`` for every pair.
    memory_budget : bytes; a pair's reference kernel is stored when it fits half of it,
        else the pair's products run by row blocks (:mod:`ldr.objectives.transport`)
    batch_size, n_batches, random_state : mini-batch OT (module docstring): ``n_batches``
        seeded index sets of ``batch_size`` rows per class; None: exact plans
    sample_weight : (n,) frequency weights, optional
        Each class's transport marginal is a_i = w_i / Σ_{j∈c} w_j instead of 1/n_c
        (:mod:`ldr.objectives.transport`), and the means and scatters are weighted: a row of
        integer weight k counts as k copies of itself (the plans of the repeated rows, each
        row's copies summed, are the weighted plans).  Exact plans only (no ``batch_size``).
    statistics : Moments, optional
        The :class:`~ldr.data.statistics.Moments` of a Dask array or memmap X with its labels
        (:func:`ldr.data.rows.moments`), when the caller has made that pass: it is not made
        again.

    Attributes
    ----------
    mean_ : (d,) the column means of X (NumPy)
    groups : each class's rows less ``mean_``, in X's namespace, device and float dtype;
        with mini-batches only the rows its batches hold (of a Dask array or memmap: NumPy),
        X itself referenced, not copied, for :meth:`full_data`
    class_counts : (k,) the rows of each class
    lazy : bool
        Whether X was read over its chunks (only the batches' rows are held)
    classes_, codes_ : the classes and each row's class index
    n_null_directions : int
        m, the nullity of S_w: the directions with no within-class spread (fewer than r;
        module docstring)

    Examples
    --------
    >>> import ldr
    >>> X, y = ldr.datasets.make_wda(300, seed=0)
    >>> wda = WDA(X, y, r=2, reg=1.0)
    >>> res = ldr.solve(wda, "scf", start="heuristic")
    >>> res.converged
    True

    Default solver: ``["scf", "trust-region"]`` from SCF's own start, continuation in reg
    (``coarse_problem``; module docstring).
    """

    method = Method("wda", "Wasserstein discriminant analysis (trace ratio; pencil for SCF)",
                    supervised=True, options={"reg": "reg"},  # plans per pair of classes
                    memory=lambda n, sizes: wda_memory(n, sizes))

    def __init__(self, X, y, r: int | None = None, reg: float | str = "auto",
                 sinkhorn_iter: int = 10,
                 ridge: float = 1e-8, continuation: float = 10.0, manifold: str = "grassmann",
                 normalize_at=None, *, p: int | None = None,
                 memory_budget: float = DEFAULT_MEMORY_BUDGET, batch_size: int | None = None,
                 n_batches: int = 4, random_state=0, sample_weight=None, eps="deprecated",
                 statistics=None):
        ridge = renamed_value(type(self).__name__, "eps", "ridge", eps, ridge)
        if p is not None:  # the WDA paper's and POT's name for r
            warnings.warn("WDA(p=...) is deprecated since ldr 0.2 and will be removed in the "
                          "next release; pass r=... (every objective's dimension is r)",
                          FutureWarning, stacklevel=2)
            if r is not None:
                raise ParameterError("p", "pass r (p is its deprecated alias), not both")
            r = p
        if r is None:
            raise ParameterError("r", "the subspace dimension is required")
        self.lazy = is_lazy(X) or isinstance(X, np.memmap)
        if self.lazy:
            if batch_size is None:
                raise ParameterError("batch_size", "exact plans hold every row of each class: "
                                     "pass X in memory, or batch_size=<rows per class and "
                                     "batch> to read a Dask array or memmap over its chunks")
            if sample_weight is not None or normalize_at is not None:
                raise ParameterError("sample_weight" if sample_weight is not None else
                                     "normalize_at", "needs every row in memory: pass X in "
                                     "memory")
            if X.ndim != 2:
                raise ParameterError("X", f"expected a 2-D array of shape (n_samples, "
                                     f"n_features), got an array with shape {X.shape}")
        else:
            X = check_rows(X, "X")  # X's namespace and device: only read (groups are copies)
        labels = np.asarray(y.compute()) if is_lazy(y) else arrays.to_host(y)
        classes, codes = check_labels(labels, X.shape[0], "y")
        weights = check_weights(sample_weight, X.shape[0])
        if weights is not None:
            keep = weights > 0  # a row of weight 0 is no row
            if not keep.all():
                X = transport.take(X, np.flatnonzero(keep))
                codes = codes[keep]
                weights = weights[keep]
                present = np.unique(codes)
                if present.shape[0] < classes.shape[0]:
                    raise ParameterError("sample_weight", f"class(es) "
                                         f"{list(np.setdiff1d(classes, classes[present]))} have "
                                         "zero total weight: drop their samples, or give them a "
                                         "positive weight")
        counts = np.bincount(codes)
        if counts.min() < 2:
            small = [classes[i] for i in np.flatnonzero(counts < 2)]
            raise ParameterError(
                "y", f"every class needs at least two samples for a transport plan; "
                             f"class(es) {small} have one")
        r = check_rank(r, X.shape[1], "r")
        if not (isinstance(reg, str) and reg == "auto") and not (
                np.isscalar(reg) and not isinstance(reg, str) and np.isfinite(reg) and reg > 0):
            raise ParameterError("reg", f"the entropic regularization must be a number > 0 or "
                                        f"'auto', got {reg!r}")
        if not (isinstance(sinkhorn_iter, (int, np.integer)) and sinkhorn_iter >= 1):
            raise ParameterError("sinkhorn_iter",
                                 f"must be a positive integer, got {sinkhorn_iter!r}")
        if not (np.isscalar(ridge) and ridge >= 0):
            raise ParameterError("ridge", f"must be >= 0, got {ridge!r}")
        if not (np.isscalar(continuation) and np.isfinite(continuation) and continuation >= 1):
            raise ParameterError("continuation", f"must be a number >= 1 (1: none), got "
                             f"{continuation!r}")
        if not (np.isscalar(memory_budget) and memory_budget > 0):
            raise ParameterError("memory_budget", f"must be a positive number of bytes, got "
                                 f"{memory_budget!r}")
        self.continuation = float(continuation)
        self.class_counts = counts
        drawn = self._draw_batches(batch_size, n_batches, random_state)
        if drawn is not None and weights is not None:
            raise ParameterError("sample_weight", "weights need exact plans: mini-batches are "
                                 "drawn uniformly; pass batch_size=None")
        if self.lazy and drawn is None:  # no class larger than a batch: read whole
            X = check_rows(take_rows(X, np.arange(X.shape[0])), "X")
            self.lazy = False
        #: each class's rows (positions within it) that the batches hold, or None: the
        #: groups are the whole classes (exact plans, or ``normalize_at``'s class spreads)
        self._held = None if drawn is None or normalize_at is not None \
            else held_rows(drawn, counts)
        #: the rows in memory (a reference, not a copy), which :meth:`full_data` reads again
        self._rows = None if self.lazy else X
        if self.lazy:
            self.mean_, self.groups, Sw, Sb, self._uniform_w = self._gather_batches(
                X, codes, statistics)
        else:
            self.mean_, self.groups, Sw, Sb, self._uniform_w = transport.class_rows(
                X, codes, len(classes), weights, held=self._held)
        if self._held is not None:
            drawn = renumbered(drawn, self._held)
        #: each class's transport marginal (NumPy, summing to 1), or None: uniform
        self._marginal = None if weights is None else [
            weights[codes == c] / weights[codes == c].sum() for c in range(len(classes))]
        #: directions with no within-class spread (the nullity of S_w); fewer than r keep
        #: the trace ratio bounded (module docstring)
        self.n_null_directions = nullity(Sw)
        if self.n_null_directions >= r:
            m = self.n_null_directions
            raise UnboundedObjective(
                "X", f"the within-class scatter S_w is singular with {m} direction(s) of no "
                f"within-class spread (numerical rank {X.shape[1] - m} < d = {X.shape[1]}; "
                f"n_samples = {X.shape[0]}), at least r = {r}: the WDA trace ratio is "
                "unbounded on an r-dimensional subspace of them, so there is no maximum to "
                f"solve for. WassersteinDA(n_components={r}).fit(X, y) gives the answer there "
                "(the r of them with the largest between-class scatter); or pass r > "
                f"{m}, or reduce the dimension first (e.g. PCA to fewer than n_samples − "
                "n_classes components) and drop constant or duplicated features", m)
        if self.n_null_directions and ridge == 0:
            raise ParameterError("ridge", "the within-class scatter S_w is singular, so the "
                                 "pencil (C_b, C_w + εI) needs ε > 0: pass ridge > 0 (the "
                                 "default is 1e-8)")
        self._fda_scatter = (Sw, Sb)
        self.classes_ = classes
        self.codes_ = codes
        #: the regularization used: ``reg``, or the value "auto" stands for (``reg``)
        self.reg = float(reg) if reg != "auto" else (
            1.0 if normalize_at is not None
            else within_reg(2.0 * float(np.trace(Sw)), r, X.shape[1]))
        self.sinkhorn_iter = int(sinkhorn_iter)
        self.ridge = float(ridge)
        self.shape = (X.shape[1], r)
        self.manifold = manifold
        self.memory_budget = float(memory_budget)
        self._ref = self.groups[0]  # the rows' namespace, device and dtype, for points
        self._key = None
        self._batches = None if drawn is None else {
            (a, b): [(rows[a], rows[b]) for rows in drawn] for a, b in self._pairs()}
        self._pair_scale = {pair: 1.0 for pair in self._pairs()}
        if normalize_at is not None:
            self._pair_scale = self._mean_sq_distances(normalize_at)

    @property
    def _cache_bytes(self) -> float:
        """A pair's reference kernel is stored when it fits half the memory budget (the
        rest: row blocks and complex-step copies); else products run by row blocks."""
        return 0.5 * self.memory_budget

    def _point(self, P):
        """P as an array of the rows' namespace, device and float dtype (a complex P, the
        complex step's, as it is)."""
        dtype = getattr(P, "dtype", None)
        if dtype is not None and arrays.namespace(P).isdtype(dtype, "complex floating"):
            return P
        xp = arrays.namespace(self._ref)
        return xp.asarray(arrays.like(P, self._ref), dtype=self._ref.dtype,
                          device=arrays.device(self._ref))

    def _draw_batches(self, batch_size, n_batches, random_state):
        """Mini-batch OT (``batch_size`` rows per class): ``n_batches`` index sets per class
        drawn once (seeded), so the cost is a fixed, smooth function; batch k of class c is
        the same in every pair of classes (c, c′), so C_b and C_w see the same rows (batches
        drawn per pair would let the C_w of some batches and the C_b of others differ by a
        sampling noise that the ratio trace exploits where batches are not much larger than
        d); None (exact) when no class exceeds ``batch_size``.  Returns the index sets, one
        list per batch of one array per class (None: the whole class), positions within
        each class."""
        self.batch_size = batch_size
        self.n_batches = n_batches
        if batch_size is None:
            return None
        if not (isinstance(batch_size, (int, np.integer)) and batch_size >= 2):
            raise ParameterError("batch_size", f"must be an integer >= 2 (rows per class in a "
                                 f"mini-batch) or None (exact plans), got {batch_size!r}")
        if not (isinstance(n_batches, (int, np.integer)) and n_batches >= 1):
            raise ParameterError("n_batches", f"must be a positive integer, got {n_batches!r}")
        if max(self.class_counts) <= batch_size:
            return None
        rng = np.random.default_rng(random_state)

        def draw(c):
            k = int(self.class_counts[c])
            return None if k <= batch_size else np.sort(rng.choice(k, batch_size,
                                                                     replace=False))
        return [[draw(c) for c in range(len(self.class_counts))] for _ in range(n_batches)]

    def _gather_batches(self, X, codes: np.ndarray, statistics=None) -> tuple:
        """A Dask array or memmap X: one pass over its chunks for the means and scatters,
        then each class's rows that its batches hold (``_held``), gathered and less the mean
        (NumPy).  Returns ``(mean, groups, S_w, S_b, uniform)`` as
        :func:`~ldr.objectives.transport.class_rows` does, ``uniform`` estimated from the
        gathered rows; ``statistics``: the pass, when already made."""
        if statistics is not None and (statistics.n != X.shape[0] or statistics.labels is None):
            raise ParameterError("statistics", f"expected the Moments of X's {X.shape[0]} rows "
                                 "with their labels")
        stats = (moments(X, codes, name="X") if statistics is None else statistics).on_host()
        Sw, Sb = stats.class_scatter()[:2]
        mean = np.asarray(stats.shift + stats.offset, dtype=float)
        held = self._held
        wanted = np.concatenate([np.flatnonzero(codes == c)[h] for c, h in enumerate(held)])
        order = np.argsort(wanted, kind="stable")
        rows = np.empty((wanted.shape[0], X.shape[1]))
        rows[order] = take_rows(X, wanted[order])  # the chunks that hold them, in row order
        rows -= mean
        groups = np.split(rows, np.cumsum([h.shape[0] for h in held])[:-1])
        uniform = sum(2.0 * float(np.mean(np.sum((G - G.mean(axis=0)) ** 2, axis=1)))
                      for G in groups)
        return mean, groups, Sw, Sb, uniform

    @property
    def exact(self) -> bool:
        """Whether the plans are between whole classes (no mini-batches)."""
        return self._batches is None

    def _pair_data(self, a: int, b: int):
        """``[(X_a rows, X_b rows, weight)]``: the whole classes, or the pair's mini-batches
        with weight 1/n_batches."""
        Xa = self.groups[a]
        Xb = self.groups[b]
        if self._batches is None:
            return [(Xa, Xb, 1.0)]
        out = []
        weight = 1.0 / len(self._batches[(a, b)])
        for ia, ib in self._batches[(a, b)]:
            if a == b:
                ib = ia  # a class against itself: the same batch on both sides
            out.append((Xa if ia is None else transport.take(Xa, ia),
                        Xb if ib is None else transport.take(Xb, ib), weight))
        return out

    def _marginals(self, a: int, b: int):
        """The transport marginals of the pair (a, b) — None: uniform (exact plans only)."""
        return None if self._marginal is None else (self._marginal[a], self._marginal[b])

    def full_data(self) -> WDA:
        """The same problem with exact plans between whole classes (no mini-batches)."""
        if self.lazy:
            raise ParameterError("X", "the rows were read over chunks and only the batches' "
                                 "rows are held: exact plans need X in memory")
        other = copy.copy(self)
        if self._held is not None:  # the groups hold the batches' rows: every row again
            other.mean_, other.groups, _, _, other._uniform_w = transport.class_rows(
                self._rows, self.codes_, len(self.classes_))
            other._held = None
        other._batches = None
        other._key = None
        other.batch_size = None
        return other

    def _mean_sq_distances(self, P0) -> dict:
        """(1/(n_a n_b)) Σ_ij ‖P0ᵀ(x_i − x_j)‖² for each pair of classes (a ≤ b), as
        v_a + v_b + ‖m_a − m_b‖² from each class's projected mean m and spread v (mean squared
        distance to its mean): no n_a × n_b matrix, and no cancellation when the classes lie
        far from the origin compared with their spread."""
        P0 = np.asarray(arrays.to_host(P0), dtype=float)
        if P0.shape != self.shape or not np.all(np.isfinite(P0)):
            raise ParameterError("normalize_at", f"expected a finite array of shape {self.shape} "
                             f"(POT's P0), got shape {P0.shape}")
        xp = arrays.namespace(self._ref)
        proj = [G @ self._point(P0) for G in self.groups]
        if self._marginal is None:
            means = [xp.mean(Y, axis=0) for Y in proj]
            spread = [float(xp.mean(xp.sum((Y - m) ** 2, axis=1))) for Y, m in zip(proj, means)]
        else:
            share = [arrays.like(a, Y) for a, Y in zip(self._marginal, proj)]
            means = [a @ Y for a, Y in zip(share, proj)]
            spread = [float(a @ xp.sum((Y - m) ** 2, axis=1))
                      for a, Y, m in zip(share, proj, means)]
        out = {}
        for a, b in self._pairs():
            gap = means[a] - means[b]
            out[(a, b)] = spread[a] + spread[b] + float(xp.sum(gap * gap))
            if not out[(a, b)] > 0:
                name_a = self.classes_[a].item()
                name_b = self.classes_[b].item()
                raise ParameterError("normalize_at", f"classes {name_a!r} and {name_b!r} have no "
                                 "spread along it (mean squared "
                                 "distance 0), so it cannot scale their regularization; pass "
                                 "another start matrix or normalize=False")
        return out

    @property
    def pair_reg(self) -> dict:
        """The entropic regularization of each pair of classes (a, b), a ≤ b, by class code:
        ``reg`` times the ``normalize_at`` scale (1 without it)."""
        return {pair: self.reg * scale for pair, scale in self._pair_scale.items()}

    def _reg(self, a: int, b: int) -> float:
        return self.reg * self._pair_scale[(a, b)]

    def _pairs(self):
        k = len(self.groups)
        return [(a, b) for a in range(k) for b in range(a, k)]

    def plans(self, P) -> dict:
        """The transport plans T^{c,c′}(P) for c ≤ c′ (:meth:`scatter` uses them unformed);
        n_c × n_c′ arrays of X's namespace and device."""
        if self.lazy:
            raise ParameterError("X", "the rows were read over chunks and only the batches' "
                                 "rows are held: the whole classes' plans need X in memory")
        if self._held is not None:  # the groups hold the batches' rows only
            return self.full_data().plans(P)
        P = self._point(P)
        return {(a, b): transport.pair_plan(self.groups[a] @ P, self.groups[b] @ P,
                                            self._reg(a, b), self.sinkhorn_iter,
                                            self._cache_bytes, self._marginals(a, b))
                for a, b in self._pairs()}

    def scatter(self, P) -> tuple:
        """(C_b, C_w) at T = T(P) (cached for the last P), d×d arrays of X's namespace.

        Each pair's scatter is Xbᵀ times :func:`~ldr.objectives.transport.pair_scatter_rows`,
        symmetrized, plus Xaᵀ diag(a) Xa (its P-independent term, computed once per set of
        batches); the pairs that share a class's batch as Xb sum their rows first (one d×d
        product)."""
        P = self._point(P)
        if self._same_point(P):
            return self._scatter
        Cb, Cw = self._row_grams()
        for b in range(len(self.groups)):
            rows = {}  # (within, j): (X_b's batch j, Σ_a weight · pair_scatter_rows)
            for a in range(b + 1):
                for j, (Xa, Xb, weight) in enumerate(self._pair_data(a, b)):
                    R = weight * transport.pair_scatter_rows(
                        Xa, Xb, P, self._reg(a, b), self.sinkhorn_iter, self._cache_bytes,
                        self._marginals(a, b))
                    old = rows.get((a == b, j))
                    rows[a == b, j] = (Xb, R if old is None else old[1] + R)
            for (within, _), (Xb, R) in rows.items():  # batch j of b: shared by pairs
                if within:
                    Cw = Cw + Xb.T @ R
                else:
                    Cb = Cb + Xb.T @ R
        uniform = self._uniform_w
        if not _trace(Cw) > 1e-12 * uniform:
            spread = uniform / (2 * len(self.groups))
            reg = self.__dict__.get("_asked_reg", self.reg)  # the user's, not a coarse one
            raise ParameterError("reg", f"{reg:g} is too small for these data: the "
                                 "within-class plans are (numerically) the identity, so the "
                                 "within-class scatter vanishes and the ratio is unbounded; "
                                 f"the within-class squared distances are about "
                                 f"{spread:.3g}: pass a reg of that order (reg is in "
                                 "squared-distance units; WassersteinDA: or normalize=True)")
        self._key = arrays.namespace(P).asarray(P, copy=True)
        self._scatter = (0.5 * (Cb + Cb.T), 0.5 * (Cw + Cw.T))
        return self._scatter

    def _row_grams(self) -> tuple:
        """Σ weight · Xaᵀ diag(a) Xa over the (b, w) pairs' batches (a = 1/n_a unless
        weighted): the P-independent term of their scatters (:meth:`scatter`), computed once
        per set of batches."""
        if self.__dict__.get("_grams_for", 0) is not self._batches:
            grams = {True: 0.0, False: 0.0}
            for a, b in self._pairs():
                for Xa, _, weight in self._pair_data(a, b):
                    if self._marginal is None:
                        gram = (weight / Xa.shape[0]) * (Xa.T @ Xa)
                    else:
                        gram = weight * (Xa.T @ (arrays.like(self._marginal[a], Xa)[:, None]
                                                 * Xa))
                    grams[a == b] = grams[a == b] + gram
            self._grams = (grams[False], grams[True])
            self._grams_for = self._batches
        return self._grams

    def _same_point(self, P) -> bool:
        """Whether P is the point of the stored scatter."""
        return arrays.same(self._key, P)

    def cost(self, P):
        """−L_b/L_w, L = Σ_pairs ⟨T, M⟩ (module docstring); on an autograd trace, the
        autograd-traceable reference (:func:`~ldr.objectives.transport.sinkhorn_log`)."""
        if arrays.traced(P):
            return self._traced_cost(P)
        P = self._point(P)
        if self._same_point(P):  # the scatter of this P is at hand (SCF's pencil)
            Cb, Cw = self._scatter
            xp = arrays.namespace(P)
            return -float(xp.sum(P * (Cb @ P)) / xp.sum(P * (Cw @ P)))
        Lb, Lw = self._pair_terms(P, "loss")
        if not float(Lw) > 1e-12 * self._uniform_w:
            self.scatter(P)  # raises: reg too small for these data
        return -float(Lb / Lw)

    def _traced_cost(self, P):
        """The cost on an autograd trace: each pair's plan by the autograd-traceable
        log-domain Sinkhorn (NumPy rows)."""
        loss_b = 0.0
        loss_w = 0.0
        for a, b in self._pairs():
            M = transport.squared_distances(anp.dot(self.groups[a], P),
                                            anp.dot(self.groups[b], P))
            T = transport.sinkhorn_log(M, self._reg(a, b), self.sinkhorn_iter,
                                       self._marginals(a, b))
            if a == b:
                loss_w = loss_w + anp.sum(T * M)
            else:
                loss_b = loss_b + anp.sum(T * M)
        return -loss_b / loss_w

    def _pair_terms(self, P, what: str) -> tuple:
        """(L_b, L_w) — and with ``what="gradient"`` their Euclidean gradients — summed over
        the pairs of classes: L = Σ_pairs ⟨T, M⟩, each pair by
        :mod:`ldr.objectives.transport` (its reverse pass recomputes the Sinkhorn iterates:
        memory independent of ``sinkhorn_iter``; row blocks when a pair's kernel exceeds
        the memory budget)."""
        L = {"b": 0.0, "w": 0.0}
        G = {"b": 0.0, "w": 0.0}
        for a, b in self._pairs():
            key = "w" if a == b else "b"
            for Xa, Xb, weight in self._pair_data(a, b):
                if what == "gradient":
                    loss, grad = transport.pair_gradient(Xa, Xb, P, self._reg(a, b),
                                                         self.sinkhorn_iter, self._cache_bytes,
                                                         self._marginals(a, b))
                    G[key] = G[key] + weight * grad
                else:
                    loss = transport.pair_loss(Xa @ P, Xb @ P, self._reg(a, b),
                                               self.sinkhorn_iter, self._cache_bytes,
                                               self._marginals(a, b))
                L[key] = L[key] + weight * loss
        if what == "gradient":
            return L["b"], L["w"], G["b"], G["w"]
        return L["b"], L["w"]

    def egrad(self, P):
        """∇(−L_b/L_w) = −(L_w ∇L_b − L_b ∇L_w)/L_w², through the Sinkhorn iterations by a
        hand-written reverse pass (:func:`ldr.objectives.transport.pair_gradient`); complex
        P is allowed (complex step, :meth:`ehvp`)."""
        Lb, Lw, gb, gw = self._pair_terms(self._point(P), "gradient")
        return -(Lw * gb - Lb * gw) / Lw**2

    #: the complex step of :meth:`ehvp` (relative to the largest entry of V)
    complex_step = 1e-30
    #: the complex step in complex64 (float32 data: h² ≪ ε, and 1e-30 would underflow)
    complex_step32 = 1e-12

    def ehvp(self, P, V):
        """The derivative of :meth:`egrad` along V by the complex step (Squire & Trapp 1998):
        Im ∇f(P + ihV)/h with h = ``complex_step`` (``complex_step32`` for float32 data) —
        forward mode through the reverse pass, exact to rounding, in the same bounded memory
        (complex arrays: twice the bytes)."""
        return transport.complex_step(self.egrad, self._point(P), self._point(V),
                                      self.complex_step, self.complex_step32)

    def ratio(self, P) -> float:
        """The trace ratio tr(PᵀC_bP)/tr(PᵀC_wP), the natural (positive) score."""
        return -float(self.cost(P))

    def ratio_trace(self, P) -> float:
        """tr((PᵀC̃_wP)⁻¹ PᵀC_bP) at T = T(P), C̃_w = C_w + εI: the ratio-trace value that SCF's
        fixed points solve (Liu et al.); compare SCF answers by this, not by ``ratio``."""
        A, B = self.pencil(P)
        P = self._point(P)
        return _trace(arrays.namespace(P).linalg.solve(P.T @ B @ P, P.T @ A @ P))

    def pencil(self, P) -> tuple:
        Cb, Cw = self.scatter(P)
        d = Cw.shape[0]
        return Cb, Cw + self.ridge * _trace(Cw) / d * arrays.eye_like(d, Cw)

    default_solver = ("scf", "trust-region")

    def whole_space_pencil(self) -> tuple:
        """The pencil at P = I_d: the transport plans of the whole space, in the original
        metric, before any projection."""
        return self.pencil(arrays.eye_like(self.shape[0], self._ref))

    def smoothed(self, factor: float) -> WDA:
        """The same data and p with reg × ``factor`` (no continuation of its own)."""
        other = copy.copy(self)
        other.reg = self.reg * factor
        other.continuation = 1.0
        other._key = None
        other._asked_reg = self.__dict__.get("_asked_reg", self.reg)
        return other

    def pencil0(self) -> tuple:
        """The whole-space pencil: SCF's own start when there is no coarse problem."""
        return self.whole_space_pencil()

    def coarse_problem(self) -> WDA | None:
        """The smoother problem with reg × ``continuation`` (no continuation of its own), whose
        ratio-trace fixed point — reached by SCF from its whole-space pencil — gives, through
        the pencil there, SCF's start on this one (:func:`ldr.driver.loop.initial_point`); None
        when ``continuation`` is 1."""
        return None if self.continuation == 1.0 else self.smoothed(self.continuation)

    def heuristic(self) -> np.ndarray:
        """Regularized FDA: top-p generalized eigenvectors of (S_b, S_w + 1e-3·tr(S_w)/d·I)."""
        Sw, Sb = self._fda_scatter
        d, p = self.shape
        return top_generalized(Sb, Sw + 1e-3 * np.trace(Sw) / d * np.eye(d), p)[0]

    def linear_map(self, P):
        """x ↦ (x − ``mean_``) P."""
        return self.mean_, P


def _trace(C) -> float:
    """tr C as a Python float (one scalar from the device)."""
    return float(arrays.namespace(C).linalg.trace(C))
