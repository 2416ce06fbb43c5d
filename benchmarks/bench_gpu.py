"""Benchmark: ldr on an accelerator (issue 24, item 5), and the same run on PyTorch-CPU.

Run from the checkout root::

    .venv/bin/python -P benchmarks/bench_gpu.py                 # CUDA; prints a skip without
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_gpu.py --device cpu

Without a CUDA device the default run prints why it skips and exits 0; ``--device cpu`` runs
every section end to end on PyTorch-CPU at small sizes (one thread: BLAS, PyTorch, XLA).
Medians over repeats, wall time, float64 and float32 where the section says so.

1. **HSIC's exact Φ and ISM fits** (``HSIC.supervised`` on a tensor of the device, Gaussian
   kernel, d = 32, q = 9, float64 and float32): one Φ at the heuristic point (the row-block
   sums on the device, :meth:`ldr.kernels.tiles.Tiles.to_namespace`) and a whole
   ``ldr.solve(obj, "ism", max_iter=30)``, against the device's arithmetic limit on the same
   shapes: the GEMM (n×n)·(n×(d+q)) plus the exp of n×n entries (n/b times the b×n block's
   where n×n does not fit the memory budget: 256 MiB on the CPU, 16 GiB on a GPU); the same
   Φ in NumPy on the host (n ≤ 2·10⁴) for comparison.
2. **PCA and orthogonal LDA from a PyTorch tensor** (n × 100, r = 5 / 3 classes, r = 2):
   ``ldr.solve`` on ``ldr.objectives.PCA(X_tensor, r)`` / ``LDA(X_tensor, y, r)`` — the
   statistics and the iterations in PyTorch on the tensor's device, ``Result.M`` a tensor —
   and ldr's estimators ``PCA``/``OrthogonalLDA`` under ``array_api_dispatch`` (their fit
   copies the rows to the host), against scikit-learn's ``PCA(svd_solver="full")`` and
   ``LinearDiscriminantAnalysis()`` under ``array_api_dispatch`` on the same tensor
   (``gtol=1e-4`` for float32 tensors: float32 cannot resolve the default 1e-8).
3. **A custom objective's trust-region solve** (on the CPU, the README's sparse PCA at
   d × r = 13 × 2 on wine's covariance; ``benchmarks/bench_backends.py``'s objectives):
   ``backend="jax"`` (``jax.jit``) and ``backend="torch"`` against ``backend="autograd"``,
   a fresh objective each time (compilation included), its final cost.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's array API dispatch needs it

import numpy as np  # noqa: E402

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common

D, Q = 32, 9


def _median(fn, repeats: int, sync) -> float:
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def hsic_rows(device, sizes, repeats, sync, budget):
    import torch

    import ldr
    from ldr.objectives import HSIC

    rows = []
    for n in sizes:
        rng = np.random.default_rng(0)
        X = rng.standard_normal((n, D))
        y = (X[:, :3].sum(1) > 0).astype(int) + (X[:, 3] > 1) + 2 * (X[:, 4] > 1)
        Xs = (X - X.mean(0)) / X.std(0)
        host = HSIC.supervised(Xs, y, Q) if n <= 20_000 else None
        for dtype in (torch.float64, torch.float32):
            obj = HSIC.supervised(torch.as_tensor(Xs, dtype=dtype, device=device), y, Q,
                                  memory_budget=budget)
            W = obj.heuristic()

            def phi(obj=obj, W=W):
                obj._cache_key = None
                return obj.phi(W)

            t_phi = _median(phi, repeats, sync)
            sync()
            t0 = time.perf_counter()
            res = ldr.solve(obj, "ism", max_iter=30)
            sync()
            t_fit = time.perf_counter() - t0
            K = torch.rand((n, n), dtype=dtype, device=device) if 8 * n * n <= budget else None
            if K is None:  # the limit on the blocks' shapes: (b×n)·(n×(d+q)) and exp, n/b times
                b = obj.block_size
                K = torch.rand((b, n), dtype=dtype, device=device)
            XZ = torch.rand((n, D + Q), dtype=dtype, device=device)
            times = n / K.shape[0]
            t_gemm = times * _median(lambda K=K, XZ=XZ: K @ XZ, repeats, sync)
            t_exp = times * _median(lambda K=K: torch.exp(K), repeats, sync)
            limit = t_gemm + t_exp
            t_host = (_median(lambda h=host, W=W: (setattr(h, "_cache_key", None),
                                                   h.phi(W.cpu().double().numpy())),
                              repeats, lambda: None) if host is not None else float("nan"))
            rows.append([n, str(dtype).replace("torch.", ""), obj.block_size,
                         common.fmt_time(t_phi), common.fmt_time(limit),
                         common.fmt_ratio(t_phi / limit), common.fmt_time(t_host),
                         common.fmt_time(t_fit), res.n_iter,
                         f"{type(res.M).__name__} {res.M.device}"])
            del K, XZ, obj
    return rows


def pca_lda_rows(device, n, repeats, sync):
    import sklearn
    import torch
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    import ldr
    from ldr.data import arrays
    from ldr.estimators import PCA, OrthogonalLDA

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, n)
    Xn = rng.standard_normal((n, 100)) * np.linspace(3, 0.5, 100) + 2.0 * y[:, None] * \
        (np.arange(100) < 4)
    rows = []
    for dtype in (torch.float64, torch.float32):
        X = torch.as_tensor(Xn, dtype=dtype, device=device)
        yt = torch.as_tensor(y, device=device)
        out = {}

        gtol = 1e-8 if dtype == torch.float64 else 1e-4  # float32 cannot resolve 1e-8

        def ldr_pca(X=X, out=out, gtol=gtol):
            out["pca"] = ldr.solve(ldr.objectives.PCA(X, 5), gtol=gtol)

        def ldr_lda(X=X, yt=yt, out=out, gtol=gtol):
            out["lda"] = ldr.solve(ldr.objectives.LDA(X, yt, 2), gtol=gtol)

        with sklearn.config_context(array_api_dispatch=True):
            cases = [
                ("PCA r=5", ldr_pca, lambda X=X: PCA(5).fit(X),
                 lambda X=X: SkPCA(5, svd_solver="full").fit(X)),
                ("orth. LDA r=2", ldr_lda, lambda X=X, yt=yt: OrthogonalLDA(2).fit(X, yt),
                 lambda X=X, yt=yt: LinearDiscriminantAnalysis().fit(X, yt)),
            ]
            for label, solve, estimator, sk in cases:
                t_solve = _median(solve, repeats, sync)
                t_est = _median(estimator, repeats, sync)
                t_sk = _median(sk, repeats, sync)
                res = out["pca" if label.startswith("PCA") else "lda"]
                where = f"{type(res.M).__name__} {arrays.device(res.M)}"
                rows.append([label, str(dtype).replace("torch.", ""), common.fmt_time(t_solve),
                             common.fmt_time(t_est), common.fmt_time(t_sk),
                             common.fmt_ratio(t_solve / t_sk), where])
    return rows


def custom_rows(repeats):
    from bench_backends import sparse_pca

    import ldr

    X, _ = ldr.datasets.load("wine")
    C = np.cov(((X - X.mean(0)) / X.std(0)).T)
    rows, base = [], None
    for backend in ("autograd", "jax", "torch"):
        if backend != "autograd" and importlib.util.find_spec(backend) is None:
            rows.append([backend, "not installed", "", "", ""])
            continue
        out = {}

        def solve(backend=backend, out=out):
            out["res"] = ldr.solve(sparse_pca(C, 2, backend), "trust-region", seed=0)

        t = _median(solve, repeats, lambda: None)
        base = t if backend == "autograd" else base
        res = out["res"]
        rows.append([backend, common.fmt_time(t), common.fmt_ratio(t / base),
                     f"{res.cost:.10f}", res.n_iter])
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if importlib.util.find_spec("torch") is None:
        print("SKIPPED: bench_gpu.py needs PyTorch (pip install 'ldr-manifold[torch]')")
        return 0
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("SKIPPED: no CUDA device (torch.cuda.is_available() is False); the GPU figures "
              "are pending.  `--device cpu` runs every section end to end on PyTorch-CPU.")
        return 0
    with common.single_threaded():
        return _run(args, torch)


def _run(args, torch) -> int:
    if args.device == "cpu":
        torch.set_num_threads(1)
        hsic_sizes, pca_n, budget = [1000, 3000], 100_000, 256 * 2**20
        name = "PyTorch-CPU, one thread"
        sync = lambda: None  # noqa: E731
    else:
        hsic_sizes, pca_n, budget = [10_000, 100_000, 1_000_000], 10_000_000, 16 * 2**30
        name = torch.cuda.get_device_name(0)
        sync = torch.cuda.synchronize
    common.print_header("ldr on an accelerator (bench_gpu.py)",
                        [f"device: {args.device} ({name}); torch {torch.__version__}; "
                         f"repeats: {args.repeats} (medians); wall time"])
    print(f"1. HSIC exact Φ on the device vs its GEMM + exp limit, and ISM fits "
          f"(d = {D}, q = {Q}, 4 classes)")
    common.print_table(["n", "dtype", "block", "Φ", "GEMM+exp", "Φ ÷ limit", "Φ NumPy",
                        "ISM fit", "iter", "Result.M"],
                       hsic_rows(args.device, hsic_sizes, args.repeats, sync, budget))
    print(f"\n2. PCA and orthogonal LDA from a {pca_n} × 100 tensor on {args.device}")
    common.print_table(["method", "dtype", "ldr.solve", "ldr estimator", "scikit-learn",
                        "solve ÷ sklearn", "Result.M"],
                       pca_lda_rows(args.device, pca_n, args.repeats, sync))
    print("\n3. Custom objective (sparse PCA 13 × 2, wine), trust region, CPU")
    common.print_table(["backend", "solve", "÷ autograd", "cost", "iter"],
                       custom_rows(args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
