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

Blocks are small enough to stay in the CPU's caches (about ``TARGET_BLOCK_BYTES`` per buffer,
:func:`rows_per_block`) and never larger than the memory budget allows.  The same block
function runs as Dask tasks (:func:`dask_sums`): each task sums a run of blocks, the d×d
results are added by a tree reduction, and under a ``dask.distributed`` client the data are
scattered once per objective.  Dask is imported only there.

One implementation for every array namespace, written against the array API: data of
another namespace than NumPy (PyTorch, CuPy, array-api-strict; on their device) take the
same blocks there (:meth:`Tiles.to_namespace`), for every built-in kernel and conic
combinations of them (f and f′, f″ for the Hessian-vector products, from
:meth:`ldr.kernels.Kernel.derivatives`); the cost is summed on the device and read once per
pass (the one scalar to the host).  A :class:`~ldr.kernels.Custom` kernel's f is autograd's,
NumPy only: such tiles refuse, naming what works.

References
----------
Wu, Li, Ioannidis, Kaeli, Sznaier & Dy (2018), Iterative spectral method for alternative
clustering, AISTATS.  Wu, Miller, Chang, Sznaier & Dy (2019), Solving interpretable kernel
dimension reduction, NeurIPS (Tables 2–3: Φ and Φ₀ of the kernel family).
"""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import take_rows
from ldr.kernels.family import Gaussian
from ldr.kernels.groups import code_groups, value_codes

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
    ``TARGET_BLOCK_BYTES`` (a block that stays in the CPU's caches) and at most ``budget``
    bytes — or, for ``ref`` an array of another namespace than NumPy (on a device, which
    favours few large products over the CPU's cache-sized ones), as many as ``budget``
    allows; at least 1."""
    by_budget = max(1, int(budget // (itemsize * max(width, 1))))
    if arrays.foreign(ref) is not None:
        return by_budget
    # the host's cache-sized blocks
    # benchmark: benchmarks/bench_hsic_scale.py
    return min(by_budget, max(1, TARGET_BLOCK_BYTES // (itemsize * max(width, 1))))


def choose_block_size(n: int, memory_budget: int | float = DEFAULT_MEMORY_BUDGET,
                      ref=None) -> int:
    """Rows per block of HSIC's b×n sums: about ``TARGET_BLOCK_BYTES`` per b×n buffer (at
    least 8 rows; cache-sized, :func:`rows_per_block`), and at most what ``BLOCK_BUFFERS``
    b×n float64 arrays fit in ``memory_budget`` (at least 1) — for ``ref`` an array of
    another namespace than NumPy (on a device), as many as that allows."""
    if not (np.isscalar(memory_budget) and memory_budget > 0):
        raise ParameterError("memory_budget", f"must be a positive number of bytes, got "
                         f"{memory_budget!r}")
    by_budget = max(1, int(memory_budget // (8 * n * BLOCK_BUFFERS)))
    if arrays.foreign(ref) is not None:
        return int(min(n, by_budget))
    by_cache = max(8, TARGET_BLOCK_BYTES // (8 * n))
    return int(min(n, by_budget, by_cache))


def class_codes(F: np.ndarray, s: np.ndarray):
    """``(gid, G)`` when the rows of Γ's factor F take few distinct values (class labels):
    ``gid`` the group of each sample (in the samples' order) and G = U diag(s) Uᵀ the value of
    Γ between groups (U the distinct rows).  ``None`` otherwise."""
    n = F.shape[0]
    cap = min(MAX_GROUPS, n // 32)
    coded = []
    for j in range(F.shape[1]):
        codes = value_codes(F[:, j], cap)
        if codes is None:
            return None
        coded.append(codes)
    grouped = code_groups(coded, n, cap)
    if grouped is None:
        return None
    gid, first = grouped
    uniq = F[first]
    return gid, (uniq * s) @ uniq.T


def class_groups(F: np.ndarray, s: np.ndarray):
    """``(order, bounds, gid, G)``: :func:`class_codes` with ``order`` sorting the samples by
    group, ``bounds`` the group ranges in that order and ``gid`` the group of each sorted
    sample.  ``None`` when F's rows are not few-valued."""
    coded = class_codes(F, s)
    if coded is None:
        return None
    gid, G = coded
    order = np.argsort(gid, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(gid, minlength=G.shape[0]))])
    return order, bounds, gid[order], G


class Tiles:
    """The data, Γ and kernel of one HSIC objective, laid out for block sums.

    ``X`` (n, d) rows; Γ as ``dense`` (n, n) or ``factor`` (F, s); ``terms`` the kernel's
    [(weight, kernel)]; ``block_size`` rows per block.  When Γ's factor is a class
    indicator the rows are stored sorted by class (sums over samples do not depend on the
    order).
    """

    def __init__(self, X, dense, factor, terms, block_size: int):
        self.dense = dense
        self.terms = list(terms)
        self.block_size = int(block_size)
        self.groups = None
        if factor is not None:
            F, s = factor
            # class labels come as a NumPy factor; a factor on a device (an embedding) is
            # never a class indicator
            grouped = class_groups(F, s) if arrays.foreign(F) is None else None
            if grouped is not None:
                order, bounds, gid, G = grouped
                X = take_rows(X, order)
                F = F[order]
                self.groups = (bounds, gid, G)
            factor = (F, s)
        self.X = X
        self.factor = factor

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def gamma_rows(self, rows: slice, buffers: arrays.Buffers | None = None):
        """Γ[rows, :] (b×n, in the stored sample order; formed in ``buffers`` if given)."""
        if self.dense is not None:
            return self.dense[rows, :]
        F, s = self.factor
        if buffers is None:
            return (F[rows, :] * s) @ F.T
        return buffers.matmul(F[rows, :] * s, F.T, "gamma")

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
        xp = arrays.namespace(ref)
        for _, k in self.terms:  # a kernel that computes in NumPy only raises, saying so
            k.derivatives(arrays.like(np.ones(1), ref), xp, (0,))
        out = Tiles.__new__(Tiles)
        out.__dict__.update(self.__dict__)
        out.X = arrays.like(self.X, ref)
        out.dense = None if self.dense is None else arrays.like(self.dense, ref)
        out.factor = None if self.factor is None else (
            arrays.like(self.factor[0], ref), arrays.like(np.asarray(self.factor[1]), ref))
        if self.groups is not None:
            bounds, gid, G = self.groups
            out.groups = (bounds, xp.asarray(gid, device=arrays.device(out.X)),
                          arrays.like(G, ref))
        return out

    def weighted(self, blk, B1, rows: slice, G=None, overwrite: bool = False):
        """(Γ_R ⊙ blk) [B 1] in the namespace of the rows: for class labels one product per
        class range of columns, its rows scaled by Γ(class_i, class); else with Γ_R formed
        (``G``: Γ_R where the caller has it; ``overwrite``: blk may be overwritten)."""
        if self.groups is None:
            G = self.gamma_rows(rows) if G is None else G
            if overwrite:
                blk *= G
                return blk @ B1
            return (blk * G) @ B1
        bounds, gid, Gc = self.groups
        g_rows = arrays.namespace(blk).take(Gc, gid[rows], axis=0)
        o = 0.0
        for c in range(len(bounds) - 1):
            c0 = int(bounds[c])
            c1 = int(bounds[c + 1])
            if c1 > c0:
                part = blk[:, c0:c1] @ B1[c0:c1, :]
                part *= g_rows[:, c:c + 1]
                o = o + part
        return o

    def gamma_sum(self, blk, rows: slice, G=None):
        """Σ Γ_R ⊙ blk as a 0-d array of the namespace (stays on the device)."""
        xp = arrays.namespace(blk)
        if self.groups is None:
            return xp.sum(blk * (self.gamma_rows(rows) if G is None else G))
        bounds, gid, Gc = self.groups
        g_rows = xp.take(Gc, gid[rows], axis=0)
        total = 0.0
        for c in range(len(bounds) - 1):
            c0 = int(bounds[c])
            c1 = int(bounds[c + 1])
            if c1 > c0:
                total = total + xp.sum(xp.sum(blk[:, c0:c1], axis=1) * g_rows[:, c])
        return total

    # -- the fused block sums ------------------------------------------------------------
    def sums(self, W, need_phi: bool, start: int = 0, stop: int | None = None):
        """``(cost, S)`` summed over the rows [start, stop): S = Φ's d×d sum (``need_phi``)
        or the gradient's d×r sum (then ∇ = S, Φ = ½(S + Sᵀ)), in the namespace and on the
        device of the rows.  Per block and kernel term: β_R from the augmented factors, f and
        f′ by :meth:`~ldr.kernels.Kernel.derivatives` (the Gaussian: one ``exp`` whose
        product with [B 1] also gives the cost), Ψ_R [B 1] by :meth:`weighted`.  The cost is
        summed on the device and read once, at the end of the pass."""
        X = self.X
        xp = arrays.namespace(X)
        n = X.shape[0]
        Z = X @ W
        rn = xp.sum(Z * Z, axis=1)
        ones = xp.ones((n, 1), dtype=X.dtype, device=arrays.device(X))
        B1 = xp.concat([X if need_phi else Z, ones], axis=1)   # Ψ·[B 1]: product and degree
        factors = []  # (left, rightᵀ)
        for _, k in self.terms:
            if k.kind == "product":
                factors.append((Z, arrays.transposed_rows(Z)))
                continue
            right = xp.concat([-2.0 * Z, ones, rn[:, None]], axis=1)
            if _is_gaussian(k):
                right = right * (-1.0 / k.s2)         # the product is −β/2σ²
            factors.append((xp.concat([Z, rn[:, None], ones], axis=1),
                            arrays.transposed_rows(right)))
        S = 0.0
        cost = 0.0
        buffers = arrays.Buffers()  # the blocks' b×n arrays, reused (NumPy)
        for rows in self.row_blocks(start, stop):
            G = None if self.groups is not None else self.gamma_rows(rows, buffers)
            for (w, k), (left, right_t) in zip(self.terms, factors):
                blk = buffers.matmul(left[rows, :], right_t, "beta")  # β (Gaussian: −β/2σ²)
                if _is_gaussian(k):
                    o = self.weighted(arrays.exp_inplace(blk), B1, rows, G,  # (Γ ⊙ K)[B 1]
                                      overwrite=True)
                    cost = cost - w * xp.sum(o[:, -1])          # −Σ Γ⊙K
                    o *= -w / k.s2                    # Ψ = Γ ⊙ f′(β)
                else:
                    if k.kind == "difference":
                        blk = xp.clip(blk, min=0.0)
                    fb, dfb = k.derivatives(blk, xp, (0, 1))
                    cost = cost - w * self.gamma_sum(fb, rows, G)
                    o = self.weighted(dfb, B1, rows, G)
                    o *= w
                del blk
                deg = o[:, -1]
                prod = o[:, :-1]
                if k.kind == "product":
                    S = S - (1.0 if need_phi else 2.0) * (X[rows, :].T @ prod)
                else:
                    own = X[rows, :] if need_phi else Z[rows, :]
                    S = S - (2.0 if need_phi else 4.0) * (
                        X[rows, :].T @ (deg[:, None] * own - prod))
        return float(cost), S


def _is_gaussian(k) -> bool:
    return type(k) is Gaussian


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
    n = tiles.n
    b = tiles.block_size
    n_blocks = -(-n // b)
    n_tasks = max(1, min(n_blocks, n_tasks or 4 * workers))
    edges = [b * (n_blocks * i // n_tasks) for i in range(n_tasks)] + [n]
    task = dask.delayed(_task_sums, pure=pure)
    parts = [task(data, W, need_phi, edges[i], edges[i + 1])
             for i in range(n_tasks) if edges[i] < edges[i + 1]]
    total = tree_sum(parts, dask.delayed(_add, pure=pure))
    (cost, S), = dask.compute(total)
    return cost, S, handle
