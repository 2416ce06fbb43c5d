"""HSIC's n×n sums by row blocks: bounded memory, one fused pass per block, optional Dask tasks.

For Z = XW, β_ij the kernel's scalar, Ψ = Γ ⊙ f′(β) and L_Ψ = diag(Ψ1) − Ψ (ISM papers,
see :class:`ldr.objectives.HSIC`), every oracle is a sum over row blocks R of the n×n arrays:

* cost        −Σ_{i∈R} Σ_j Γ_ij f(β_ij)
* Φ           −2 X_Rᵀ(diag(Ψ_R 1) X_R − Ψ_R X)     (difference kernels; −X_Rᵀ Ψ_R X for product)
* gradient    −4 X_Rᵀ(diag(Ψ_R 1) Z_R − Ψ_R Z)     (−2 X_Rᵀ Ψ_R Z)

so only one b×n block lives at a time and memory is O(n·(b + d)).  One block is one pass:

1. β_R by **one** product of augmented factors, [Z_R, ‖z_i‖², 1] · [−2Z, 1, ‖z_j‖²]ᵀ (for the
   Gaussian, scaled by −1/2σ² so the product is already exp's argument);
2. f and f′ in place (Gaussian: one ``exp`` in the same buffer; f′ = −f/2σ²);
3. Γ ⊙ ·: for class labels (Γ = H YYᵀ H / n², rows of Γ's factor take only c values) the
   samples are sorted by class once, Γ is constant on each (row, class) tile, and the weight
   is applied to the small products instead of to the n×n block: the block is multiplied by
   [X 1] (or [Z 1]) one class range of columns at a time and each product row is scaled by
   Γ(class_i, class).  Otherwise Γ_R is formed in a second buffer and multiplied in place;
4. **one** product Ψ_R [X 1]: its last column is the degree Ψ_R 1 (and, for the Gaussian,
   the cost), so there is no second pass over Ψ.

Blocks are small enough to stay in cache (about ``TARGET_BLOCK_BYTES`` per buffer: at
n = 8000, 64-row blocks ran faster than 256- or 1024-row ones) and never larger than the
memory budget allows.  The same block function runs as Dask tasks (:func:`dask_sums`): each
task sums a run of blocks, the d×d results are added by a tree reduction, and under a
``dask.distributed`` client the data are scattered once per objective.  Dask is imported
only there.

Data of another array namespace than NumPy (PyTorch, CuPy, array-api-strict; on their device)
take the same blocks in that namespace (:meth:`Tiles.to_namespace`), with the array API
standard's operations instead of NumPy's ``out=`` buffers, for every built-in kernel and conic
combinations of them: f and f′ (f″ for the Hessian-vector products) come from
:meth:`ldr.kernels.Kernel.derivatives`, the Gaussian keeps its single ``exp`` whose product
with [B 1] also gives the cost, and the cost is summed on the device and read once per pass
(the one scalar to the host).  A :class:`~ldr.kernels.Custom` kernel's f is autograd's, NumPy
only: such tiles refuse, naming what works.
"""

from __future__ import annotations

import numpy as np

from ldr.data import arrays
from ldr.errors import ParameterError
from ldr.kernels.family import Gaussian, Kernel, in_namespace

#: default memory budget (bytes) for the b×n working arrays of one evaluation
DEFAULT_MEMORY_BUDGET = 256 * 2**20
#: preferred size (bytes) of one b×n block buffer: small blocks stay in the CPU caches (L2
#: 1 MiB per core, L3 32 MiB here)
TARGET_BLOCK_BYTES = 4 * 2**20
#: b×n arrays alive at once in the general (non-Gaussian, unsorted Γ) path or an HVP
BLOCK_BUFFERS = 6
#: Γ's factor is treated as class labels when its rows take at most this many values
MAX_GROUPS = 256


def rows_per_block(width: int, itemsize: int, budget: float, ref=None) -> int:
    """Rows of a block of ``width`` columns of ``itemsize``-byte entries: about
    ``TARGET_BLOCK_BYTES`` (cache-sized: at n = 8000, 64-row blocks ran faster than 256- or
    1024-row ones, ``benchmarks/bench_hsic_scale.py``) and at most ``budget`` bytes — or, for
    ``ref`` an array of another namespace than NumPy (on a device, which favours few large
    products over the CPU's cache-sized ones), as many as ``budget`` allows; at least 1."""
    by_budget = max(1, int(budget // (itemsize * max(width, 1))))
    if arrays.foreign(ref) is not None:
        return by_budget
    return min(by_budget, max(1, TARGET_BLOCK_BYTES // (itemsize * max(width, 1))))


def choose_block_size(n: int, memory_budget: int | float = DEFAULT_MEMORY_BUDGET) -> int:
    """Rows per block: about ``TARGET_BLOCK_BYTES`` per b×n buffer (at least 8 rows), and at
    most what ``BLOCK_BUFFERS`` b×n float64 arrays fit in ``memory_budget`` (at least 1)."""
    if not (np.isscalar(memory_budget) and memory_budget > 0):
        raise ParameterError("memory_budget", f"must be a positive number of bytes, got "
                         f"{memory_budget!r}")
    by_budget = max(1, int(memory_budget // (8 * n * BLOCK_BUFFERS)))
    by_cache = max(8, TARGET_BLOCK_BYTES // (8 * n))
    return int(min(n, by_budget, by_cache))


def class_groups(F: np.ndarray, s: np.ndarray):
    """``(order, bounds, gid, G)`` when the rows of Γ's factor F take few distinct values
    (class labels): ``order`` sorts the samples by value, ``bounds`` are the group ranges in
    that order, ``gid`` the group of each sorted sample and G = U diag(s) Uᵀ the value of Γ
    between groups (U the distinct rows).  ``None`` otherwise."""
    n = F.shape[0]
    uniq, inv = np.unique(F, axis=0, return_inverse=True)
    g = uniq.shape[0]
    if g > MAX_GROUPS or 32 * g > n:
        return None
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(inv, minlength=g))])
    return order, bounds, inv[order], (uniq * s) @ uniq.T


class Tiles:
    """The data, Γ and kernel of one HSIC objective, laid out for block sums.

    ``X`` (n, d) rows; Γ as ``dense`` (n, n) or ``factor`` (F, s); ``terms`` the kernel's
    [(weight, kernel)]; ``block_size`` rows per block.  When Γ's factor is a class
    indicator the rows are stored sorted by class (sums over samples do not depend on the
    order).
    """

    def __init__(self, X, dense, factor, terms, block_size: int):
        self.dense, self.terms, self.block_size = dense, list(terms), int(block_size)
        self.groups = None
        if factor is not None:
            F, s = factor
            grouped = class_groups(F, s)
            if grouped is not None:
                order, bounds, gid, G = grouped
                X, F = X[order], F[order]
                self.groups = (bounds, gid, G)
            factor = (F, s)
        self.X, self.factor = X, factor

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def gamma_rows(self, rows: slice) -> np.ndarray:
        """Γ[rows, :] (b×n, in the stored sample order)."""
        if self.dense is not None:
            return self.dense[rows, :]
        F, s = self.factor
        return (F[rows, :] * s) @ F.T

    def row_blocks(self, start: int = 0, stop: int | None = None):
        stop = self.n if stop is None else stop
        for i in range(start, stop, self.block_size):
            yield slice(i, min(i + self.block_size, stop))

    def to_namespace(self, ref) -> Tiles:
        """These tiles with the rows, Γ and the class weights as arrays of ``ref``'s namespace,
        device and dtype (PyTorch, CuPy, array-api-strict, ...): :meth:`sums` then runs there,
        block by block, with one scalar (the cost) to the host per pass.  Every built-in
        kernel and conic combinations of them (:meth:`ldr.kernels.Kernel.derivatives`); a
        :class:`~ldr.kernels.Custom` kernel (autograd's f) is a ParameterError that says so."""
        for _, k in self.terms:
            if not in_namespace(k):  # the base class's method raises, saying what works
                Kernel.derivatives(k, None, None)
        out = Tiles.__new__(Tiles)
        out.__dict__.update(self.__dict__)
        out.X = arrays.like(self.X, ref)
        out.dense = None if self.dense is None else arrays.like(self.dense, ref)
        out.factor = None if self.factor is None else (
            arrays.like(self.factor[0], ref), arrays.like(np.asarray(self.factor[1]), ref))
        if self.groups is not None:
            bounds, gid, G = self.groups
            xp = arrays.namespace(out.X)
            out.groups = (bounds, xp.asarray(gid, device=arrays.device(out.X)),
                          arrays.like(G, ref))
        return out

    def weighted(self, blk, B1, rows: slice):
        """(Γ_R ⊙ blk) [B 1] in the namespace of the rows: for class labels one product per
        class range of columns, its rows scaled by Γ(class_i, class); else Γ_R formed."""
        if self.groups is None:
            return (blk * self.gamma_rows(rows)) @ B1
        bounds, gid, G = self.groups
        g_rows = arrays.namespace(blk).take(G, gid[rows], axis=0)
        o = 0.0
        for c in range(len(bounds) - 1):
            c0, c1 = int(bounds[c]), int(bounds[c + 1])
            if c1 > c0:
                o = o + (blk[:, c0:c1] @ B1[c0:c1, :]) * g_rows[:, c:c + 1]
        return o

    def _gamma_sum(self, blk, rows: slice):
        """Σ Γ_R ⊙ blk as a 0-d array of the namespace (stays on the device)."""
        xp = arrays.namespace(blk)
        if self.groups is None:
            return xp.sum(blk * self.gamma_rows(rows))
        bounds, gid, G = self.groups
        g_rows = xp.take(G, gid[rows], axis=0)
        total = 0.0
        for c in range(len(bounds) - 1):
            c0, c1 = int(bounds[c]), int(bounds[c + 1])
            if c1 > c0:
                total = total + xp.sum(xp.sum(blk[:, c0:c1], axis=1) * g_rows[:, c])
        return total

    def _sums_namespace(self, W, need_phi: bool, start: int, stop: int | None):
        """:meth:`sums` in the namespace of the rows (no ``out=`` buffers): per block and
        kernel term, β_R from the augmented factors, f and f′ by
        :meth:`~ldr.kernels.Kernel.derivatives` (the Gaussian: one ``exp`` whose product with
        [B 1] also gives the cost), Ψ_R [B 1] by :meth:`weighted`.  The cost is summed on the
        device and read once, at the end of the pass."""
        X = self.X
        xp = arrays.namespace(X)
        n, d = X.shape
        Z = X @ W
        rn = xp.sum(Z * Z, axis=1)
        ones = xp.ones((n, 1), dtype=X.dtype, device=arrays.device(X))
        B1 = xp.concat([X if need_phi else Z, ones], axis=1)
        left = xp.concat([Z, rn[:, None], ones], axis=1)
        diff_right = xp.concat([-2.0 * Z, ones, rn[:, None]], axis=1).T
        S, cost = 0.0, 0.0
        for w, k in self.terms:
            gaussian = _is_gaussian(k)
            if k.kind == "product":
                lt, right = Z, Z.T
            else:
                s2 = float(k._s2()) if gaussian else 1.0
                lt, right = left, diff_right * (-1.0 / s2) if gaussian else diff_right
            for rows in self.row_blocks(start, stop):
                blk = lt[rows, :] @ right                       # β (Gaussian: −β/2σ²)
                if gaussian:
                    o = self.weighted(xp.exp(blk), B1, rows)    # (Γ ⊙ K)[B 1]
                    cost = cost - w * xp.sum(o[:, -1])
                    o = o * (-w / s2)                           # Ψ = Γ ⊙ f′(β)
                else:
                    if k.kind == "difference":
                        blk = xp.clip(blk, min=0.0)
                    fb, dfb = k.derivatives(blk, xp, (0, 1))
                    cost = cost - w * self._gamma_sum(fb, rows)
                    o = self.weighted(dfb, B1, rows) * w
                deg, prod = o[:, -1], o[:, :-1]
                if k.kind == "product":
                    S = S - (1.0 if need_phi else 2.0) * (X[rows, :].T @ prod)
                else:
                    own = X[rows, :] if need_phi else Z[rows, :]
                    S = S - (2.0 if need_phi else 4.0) * (
                        X[rows, :].T @ (deg[:, None] * own - prod))
        return float(cost), S

    # -- the fused block sums ------------------------------------------------------------
    def sums(self, W: np.ndarray, need_phi: bool, start: int = 0, stop: int | None = None):
        """``(cost, S)`` summed over the rows [start, stop): S = Φ's d×d sum (``need_phi``)
        or the gradient's d×r sum (then ∇ = S, Φ = ½(S + Sᵀ))."""
        if type(self.X) is not np.ndarray:  # another namespace (:meth:`to_namespace`)
            return self._sums_namespace(W, need_phi, start, stop)
        X = self.X
        n, d = X.shape
        Z = X @ W
        rn = np.einsum("ij,ij->i", Z, Z)
        ones = np.ones((n, 1))
        B1 = np.hstack([X if need_phi else Z, ones])          # Ψ·[B 1]: product and degree
        width = B1.shape[1] - 1
        S = np.zeros((d, width))
        cost = 0.0
        b = self.block_size
        buf = np.empty((b, n))
        out = np.empty((b, width + 1))
        gbuf = None
        factors = {}
        for t, (_, k) in enumerate(self.terms):
            if k.kind == "difference":
                left = np.hstack([Z, rn[:, None], ones])
                right = np.hstack([-2.0 * Z, ones, rn[:, None]])
                if _is_gaussian(k):
                    right *= -1.0 / k._s2()                    # the product is −β/2σ²
            else:
                left, right = Z, Z
            factors[t] = (left, np.ascontiguousarray(right.T))
        for rows in self.row_blocks(start, stop):
            m = rows.stop - rows.start
            blk, o = buf[:m], out[:m]
            for t, (w, k) in enumerate(self.terms):
                left, right_t = factors[t]
                np.matmul(left[rows], right_t, out=blk)       # β (Gaussian: −β/2σ²)
                if _is_gaussian(k):
                    np.exp(blk, out=blk)                       # K; f′ = −K/2σ²
                    scale = -w / k._s2()
                    if self.groups is not None:
                        self._grouped_product(blk, B1, rows, o)
                    else:
                        if gbuf is None:
                            gbuf = np.empty((b, n))
                        g = gbuf[:m]
                        if self.dense is not None:
                            g[...] = self.dense[rows]
                        else:
                            F, s = self.factor
                            np.matmul(F[rows] * s, F.T, out=g)
                        blk *= g                               # Γ ⊙ K
                        np.matmul(blk, B1, out=o)
                    cost -= w * float(o[:, -1].sum())          # −Σ Γ⊙K
                    o *= scale                                 # Ψ = Γ ⊙ f′(β)
                else:
                    if k.kind == "difference":
                        np.maximum(blk, 0.0, out=blk)
                    fb, dfb = k.f_df(blk)
                    G = self.gamma_rows(rows)
                    cost -= w * float(np.vdot(G, fb))
                    del fb
                    Psi = np.multiply(dfb, G, out=dfb if _writable(dfb, blk) else None)
                    del G
                    np.matmul(Psi, B1, out=o)
                    o *= w
                    del Psi
                deg, prod = o[:, -1], o[:, :-1]
                if k.kind == "product":
                    S -= (1.0 if need_phi else 2.0) * (X[rows].T @ prod)
                else:
                    own = X[rows] if need_phi else Z[rows]
                    S -= (2.0 if need_phi else 4.0) * (X[rows].T @ (deg[:, None] * own - prod))
        return cost, S

    def _grouped_product(self, blk, B1, rows, o):
        """o = (Γ_R ⊙ blk)[B 1] for class-constant Γ: one product per class range of columns,
        its rows scaled by Γ(class_i, class)."""
        bounds, gid, G = self.groups
        g_rows = gid[rows]
        o[...] = 0.0
        tmp = np.empty_like(o)
        for c in range(len(bounds) - 1):
            c0, c1 = bounds[c], bounds[c + 1]
            if c1 == c0:
                continue
            np.matmul(blk[:, c0:c1], B1[c0:c1], out=tmp)
            tmp *= G[g_rows, c][:, None]
            o += tmp


def _is_gaussian(k) -> bool:
    return type(k) is Gaussian


def _writable(a, blk) -> bool:
    """Whether f′'s array may be overwritten (it is its own, not the caller's workspace)."""
    return isinstance(a, np.ndarray) and a.flags.writeable and a.dtype == np.float64 \
        and not np.shares_memory(a, blk)


def _add(a, b):
    return a[0] + b[0], a[1] + b[1]


def _task_sums(tiles: Tiles, W, need_phi, start, stop):
    return tiles.sums(W, need_phi, start, stop)


def tree_sum(items, add):
    """Add a list pairwise, level by level (a balanced reduction tree)."""
    items = list(items)
    while len(items) > 1:
        items = [add(items[i], items[i + 1]) if i + 1 < len(items) else items[i]
                 for i in range(0, len(items), 2)]
    return items[0]


def dask_sums(tiles: Tiles, W, need_phi: bool, n_tasks: int | None = None, handle=None):
    """:meth:`Tiles.sums` over all rows as Dask tasks on the current scheduler: ``n_tasks``
    runs of row blocks (default: 4 per worker or thread), added by a tree reduction.

    Under a ``dask.distributed`` client the :class:`Tiles` are scattered to the workers once
    (``handle`` keeps the future between calls; returned for the next call).  A pass that
    fails on the cluster (a worker lost mid-pass beyond what Dask's own retries recover, a
    task forgotten with it) is run once more from a fresh scatter under fresh task keys; a
    second failure is a RuntimeError saying so — never a partial sum."""
    try:
        return _dask_pass(tiles, W, need_phi, n_tasks, handle, pure=True)
    except ParameterError:
        raise
    except Exception as exc:  # noqa: BLE001 - one more pass, then a clear error
        first = exc
    try:
        return _dask_pass(tiles, W, need_phi, n_tasks, None, pure=False)
    except ParameterError:
        raise
    except Exception as exc:  # noqa: BLE001
        what = f"{type(first).__name__}: {first}; then {type(exc).__name__}: {exc}"
        raise RuntimeError(f"the Dask pass over the {tiles.n} rows failed twice ({what}): "
                           "check the cluster's workers, or use backend='numpy'") from exc


def _dask_pass(tiles: Tiles, W, need_phi: bool, n_tasks, handle, pure: bool):
    import dask

    client = None
    try:
        from distributed import default_client

        client = default_client()
    except (ImportError, ValueError):
        client = None
    if client is not None:
        if handle is None or handle[0] is not client or handle[1].status != "finished":
            handle = (client, client.scatter(tiles, broadcast=True, hash=False))
        data = handle[1]
        workers = max(1, len(client.scheduler_info().get("workers", {})))
    else:
        data = dask.delayed(tiles, pure=True)
        import os

        workers = os.cpu_count() or 1
    n, b = tiles.n, tiles.block_size
    n_blocks = -(-n // b)
    n_tasks = max(1, min(n_blocks, n_tasks or 4 * workers))
    edges = [b * (n_blocks * i // n_tasks) for i in range(n_tasks)] + [n]
    task = dask.delayed(_task_sums, pure=pure)
    parts = [task(data, W, need_phi, edges[i], edges[i + 1])
             for i in range(n_tasks) if edges[i] < edges[i + 1]]
    total = tree_sum(parts, dask.delayed(_add, pure=pure))
    (cost, S), = dask.compute(total)
    return cost, S, handle
