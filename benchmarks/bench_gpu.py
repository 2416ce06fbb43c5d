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
   ``ldr.solve(obj, "ism", max_iter=100)`` (default gtol: 2.3e-4 in float32), against the
   device's arithmetic limit on the same shapes: the GEMM (n×n)·(n×(d+q)) plus the exp of n×n
   entries (n/b times the b×n block's where n×n does not fit the memory budget: 256 MiB on
   the CPU, 16 GiB on a GPU); the same Φ in NumPy on the host (n ≤ 2·10⁴) for comparison.
2. **PCA and orthogonal LDA from a PyTorch tensor** (n × 100, r = 5 / 3 classes, r = 2):
   ``ldr.solve`` on ``ldr.objectives.PCA(X_tensor, r)`` / ``LDA(X_tensor, y, r)`` — the
   statistics and the iterations in PyTorch on the tensor's device, ``Result.M`` a tensor —
   and ldr's estimators ``PCA``/``OrthogonalLDA`` under ``array_api_dispatch`` (fitted on the
   tensor's device too), against scikit-learn's ``PCA`` at its default (``svd_solver="auto"``,
   which takes ``"covariance_eigh"`` for n ≫ d, ldr's algorithm) and
   ``LinearDiscriminantAnalysis()`` under ``array_api_dispatch`` on the same tensor
   (the default gtol, 1e-8 for float64 and 2.3e-4 for float32 tensors:
   :func:`ldr.core.stopping.default_gtol`).
4. **WDA** (``ldr.objectives.WDA`` on a tensor of the device: 3 classes on circles plus noise,
   d = 20, r = 2, reg = 1 as ``WassersteinDA``'s default, 10 Sinkhorn iterations, memory
   budget as for HSIC): one cost + Euclidean gradient (the checkpointed reverse pass,
   :mod:`ldr.objectives.transport`), one complex-step Hessian-vector product, and a
   whole ``ldr.solve(obj, "scf", xtol=1e-6)`` fit (the estimator's solver and xtol; 1e-5 in
   float32, whose fixed-point residual stagnates near 1e-6; continuation in reg included) —
   against the same in NumPy (float64) on the host (n ≤ 10⁴).
   n = 10⁴, 10⁵ on CUDA; 2000, 4000 with ``--device cpu`` (``--wda-sizes``).
5. **The pairwise estimators that fit wholly on the device** (under scikit-learn's
   ``array_api_dispatch``, float64): ``LPP(2)`` and ``NPE(2)`` (exact neighbour search by
   strips of rows on the device, the edges' sums there), ``MDS(2)``, ``KernelSDR(2)``,
   ``WassersteinDA(2)``, ``NCA(2)``, ``LargeMarginDML(2)``, ``WDAClustering(2)``,
   ``UnsupervisedHSIC(2)`` and ``KDAC(2)`` (the sign classes its existing clustering) at their
   defaults on n × 20
   rows (y = sin(2 xᵀb₁) + (xᵀb₂)² + 0.1 ε for KernelSDR; the four sign classes of xᵀb₁,
   xᵀb₂ for WassersteinDA and the metric learners), one fit each, its
   verdict, the device's peak memory (``torch.cuda.max_memory_allocated``; "-" on the CPU),
   and the same fit in NumPy on the host beside it for n ≤ ``--host-max``.  A fit whose time,
   projected from the smaller n (n² for the exact searches of LPP, NPE and the metric
   learners, n for the others),
   would overrun ``--budget`` is skipped and says so.  n = 10⁵, 10⁶, 10⁷ on CUDA; 1000, 2000
   with ``--device cpu`` (``--pairwise-sizes``).
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


class Deadline:
    """The run's time budget (``--budget`` seconds): a step that would end past it is skipped
    and its row says so, so a lent device's fixed time yields every row that fits."""

    def __init__(self, seconds: float | None):
        self.end = time.perf_counter() + seconds if seconds else float("inf")

    def allows(self, projected: float) -> bool:
        return time.perf_counter() + projected < self.end

    def left(self) -> float:
        return self.end - time.perf_counter()


def _progress(*parts) -> None:
    print("  ..", *parts, flush=True)


def _hsic_data(n):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, D))
    y = (X[:, :3].sum(1) > 0).astype(int) + (X[:, 3] > 1) + 2 * (X[:, 4] > 1)
    return (X - X.mean(0)) / X.std(0), y


def _dtypes(torch, names):
    return tuple(getattr(torch, name) for name in names.split(","))


def hsic_rows(device, sizes, repeats, sync, budget, deadline, dtype_names="float64,float32"):
    """Φ rows first for every n (cheap), then the ISM fits, smallest n first, float32 before
    float64 at the largest n (a fit is 20-40 Φ's: skipped when the deadline cannot hold 40)."""
    import torch

    import ldr
    from ldr.objectives import HSIC

    dtypes = _dtypes(torch, dtype_names)
    phi_rows, t_phis = {}, {}
    for n in sizes:
        Xs, y = _hsic_data(n)
        host = HSIC.supervised(Xs, y, Q) if n <= 20_000 else None
        reps = repeats if n < 10**6 else 1
        for dtype in dtypes:
            label = str(dtype).replace("torch.", "")
            if not deadline.allows((reps + 2) * 100 * t_phis.get((n // 10, dtype), 0.0)):
                phi_rows[n, dtype] = [n, label, "", "skipped: budget", "", "", ""]
                continue
            obj = HSIC.supervised(torch.as_tensor(Xs, dtype=dtype, device=device), y, Q,
                                  memory_budget=budget)
            W = obj.heuristic()

            def phi(obj=obj, W=W):
                obj.forget()
                return obj.phi(W)

            t_phi = _median(phi, reps, sync)
            t_phis[n, dtype] = t_phi
            b = n if 8 * n * n <= budget else obj.block_size
            K = torch.rand((b, n), dtype=dtype, device=device)
            XZ = torch.rand((n, D + Q), dtype=dtype, device=device)
            times = n / b  # the limit on the blocks' shapes: (b×n)·(n×(d+q)) and exp, n/b times
            t_gemm = times * _median(lambda K=K, XZ=XZ: K @ XZ, max(reps, 3), sync)
            t_exp = times * _median(lambda K=K: torch.exp(K), max(reps, 3), sync)
            limit = t_gemm + t_exp
            t_host = (_median(lambda h=host, W=W: (h.forget(),
                                                   h.phi(W.cpu().double().numpy())),
                              reps, lambda: None) if host is not None else float("nan"))
            phi_rows[n, dtype] = [n, label, obj.block_size, common.fmt_time(t_phi),
                                  common.fmt_time(limit), common.fmt_ratio(t_phi / limit),
                                  common.fmt_time(t_host)]
            _progress("Φ", *phi_rows[n, dtype])
            del K, XZ, obj
            if device == "cuda":
                torch.cuda.empty_cache()
    fits = {}
    order = [(n, dt) for n in sizes for dt in (dtypes if n < max(sizes) else dtypes[::-1])]
    for n, dtype in order:
        if (n, dtype) not in t_phis:
            continue
        projected = 40 * t_phis[n, dtype]
        if not deadline.allows(projected):
            fits[n, dtype] = [f"skipped: budget ({common.fmt_time(projected)} projected)",
                              "", "", ""]
            continue
        Xs, y = _hsic_data(n)
        obj = HSIC.supervised(torch.as_tensor(Xs, dtype=dtype, device=device), y, Q,
                              memory_budget=budget)
        sync()
        t0 = time.perf_counter()
        res = ldr.solve(obj, "ism", max_iter=100)  # gtol: the default for the dtype
        sync()
        t_fit = time.perf_counter() - t0
        fits[n, dtype] = [common.fmt_time(t_fit), res.n_iter, "yes" if res.converged else "no",
                          f"{type(res.M).__name__} {res.M.device}"]
        if not res.converged:
            _progress("  not converged:", res.reason)
        _progress("ISM fit", n, dtype, *fits[n, dtype])
        del obj
    rows = []
    for n in sizes:
        for dtype in dtypes:
            row = phi_rows.get((n, dtype))
            if row is None:
                continue
            rows.append(row + fits.get((n, dtype), ["", "", "", ""]))
    return rows


def pca_lda_rows(device, n, repeats, sync, deadline, dtype_names="float64,float32"):
    import sklearn
    import torch
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    import ldr
    from ldr.data import arrays
    from ldr.estimators import PCA, OrthogonalLDA

    rows = []
    for dtype in _dtypes(torch, dtype_names):
        # generated where it is used: 10⁷ × 100 normals on the host would take longer than a fit
        g = torch.Generator(device=device).manual_seed(0)
        yt = torch.randint(0, 3, (n,), generator=g, device=device)
        scale = torch.linspace(3, 0.5, 100, dtype=dtype, device=device)
        shift = 2.0 * (torch.arange(100, device=device) < 4).to(dtype)
        X = torch.randn((n, 100), generator=g, dtype=dtype, device=device) * scale \
            + yt[:, None].to(dtype) * shift
        out = {}

        def ldr_pca(X=X, out=out):
            out["pca"] = ldr.solve(ldr.objectives.PCA(X, 5))

        def ldr_lda(X=X, yt=yt, out=out):
            out["lda"] = ldr.solve(ldr.objectives.LDA(X, yt, 2))

        with sklearn.config_context(array_api_dispatch=True):
            cases = [
                ("PCA r=5", ldr_pca, lambda X=X: PCA(5).fit(X),
                 lambda X=X: SkPCA(5).fit(X)),  # scikit-learn's default solver
                ("orth. LDA r=2", ldr_lda, lambda X=X, yt=yt: OrthogonalLDA(2).fit(X, yt),
                 lambda X=X, yt=yt: LinearDiscriminantAnalysis().fit(X, yt)),
            ]
            for label, solve, estimator, sk in cases:
                name = str(dtype).replace("torch.", "")
                if not deadline.allows(0):
                    rows.append([label, name, "skipped: budget", "", "", "", "", ""])
                    continue
                t_solve = _median(solve, repeats, sync)
                # the solver alone, on an objective whose statistics are computed
                built = (ldr.objectives.PCA(X, 5) if label.startswith("PCA")
                         else ldr.objectives.LDA(X, yt, 2))
                t_iter = _median(lambda b=built: ldr.solve(b), repeats, sync)
                t_est = _median(estimator, repeats, sync)
                try:
                    t_sk = _median(sk, repeats, sync)
                except Exception as exc:  # noqa: BLE001 — a row says what scikit-learn raised
                    _progress("scikit-learn failed:", type(exc).__name__, str(exc)[:200])
                    t_sk = float("nan")
                res = out["pca" if label.startswith("PCA") else "lda"]
                where = f"{type(res.M).__name__} {arrays.device(res.M)}"
                rows.append([label, name, common.fmt_time(t_solve), common.fmt_time(t_iter),
                             common.fmt_time(t_est),
                             common.fmt_time(t_sk), common.fmt_ratio(t_solve / t_sk), where])
                _progress(*rows[-1])
        del X, yt
        if device == "cuda":
            torch.cuda.empty_cache()
    return rows


WDA_D, WDA_R = 20, 2
#: an SCF fit's time in cost + gradient evaluations, for the deadline's projection (4.4 for
#: NumPy at n = 4000, 2.8 on an H200 at n = 10⁴: about 14 iterations of a cost and a pencil,
#: continuation included; 12 leaves a margin)
FIT_CALLS = 12


def _wda_data(torch, n, dtype, device):
    """POT's WDA example data in d = 20 (:func:`ldr.datasets.make_wda`), drawn on the device."""
    g = torch.Generator(device=device).manual_seed(0)
    y = torch.arange(n, device=device) * 3 // n
    t = torch.rand(n, generator=g, dtype=dtype, device=device) * (2 * np.pi)
    radius = (y + 1).to(dtype)
    X = torch.randn((n, WDA_D), generator=g, dtype=dtype, device=device)
    X[:, 0] = radius * torch.cos(t) + 0.2 * X[:, 0]
    X[:, 1] = radius * torch.sin(t) + 0.2 * X[:, 1]
    return X, y


def wda_rows(device, sizes, repeats, sync, budget, deadline, dtype_names="float64,float32",
             host_max=10_000):
    """Per n and dtype: cost + gradient, one HVP and an SCF fit on the device, the same in
    NumPy on the host for n ≤ ``host_max``; each step skipped (and said so) when the deadline
    cannot hold its projection from the smaller n (work ∝ n²)."""
    import torch

    import ldr
    from ldr.data import arrays
    from ldr.objectives import WDA

    rows, t_cg = [], {}
    for n in sizes:
        for dtype in _dtypes(torch, dtype_names):
            label = str(dtype).replace("torch.", "")
            row = [n, label] + [""] * 9
            rows.append(row)
            prev = [t * (n / m) ** 2 for (m, dt), t in t_cg.items() if dt == dtype]
            projected = max(prev) if prev else 0.0
            if not deadline.allows(6 * projected):
                row[2] = f"skipped: budget ({common.fmt_time(6 * projected)} projected)"
                _progress("WDA", *row)
                continue
            try:
                X, y = _wda_data(torch, n, dtype, device)
                obj = WDA(X, y, WDA_R, reg=1.0, memory_budget=budget)
                P = arrays.like(obj.heuristic(), obj._ref)
                V = arrays.like(np.random.default_rng(1).standard_normal((WDA_D, WDA_R)), P)
                reps = repeats if projected < 0.5 else 1
                obj.cost(P)  # warm-up: the device's first kernels and libraries load here
                sync()
                t_cg[n, dtype] = t = _median(
                    lambda o=obj, P=P: (o.cost(P), o.egrad(P)), reps, sync)
                row[2] = common.fmt_time(t)
                _progress("WDA cost+grad", n, label, row[2])
                t_h = _median(lambda o=obj, P=P, V=V: o.ehvp(P, V), reps, sync)
                row[3] = common.fmt_time(t_h)
                _progress("WDA HVP", n, label, row[3])
                if deadline.allows(FIT_CALLS * t):
                    sync()
                    t0 = time.perf_counter()
                    res = ldr.solve(obj, "scf", xtol=1e-6 if dtype == torch.float64 else 1e-5)
                    sync()
                    row[4:7] = [common.fmt_time(time.perf_counter() - t0), res.n_iter,
                                "yes" if res.converged else "no"]
                    row[10] = f"{type(res.M).__name__} {arrays.device(res.M)}"
                    if not res.converged:
                        _progress("  not converged:", res.reason)
                else:
                    row[4] = f"skipped: budget ({common.fmt_time(FIT_CALLS * t)} projected)"
                _progress("WDA fit", n, label, *row[4:7])
                if n <= host_max:
                    _wda_host(row, X, y, P, V, reps, budget, deadline)
                    _progress("WDA NumPy", n, label, *row[7:10])
            except Exception as exc:  # noqa: BLE001 — a row says what failed; go on
                import traceback

                traceback.print_exc()
                row[-1] = f"failed: {type(exc).__name__}: {str(exc)[:80]}"
            finally:
                obj = X = None
                if device == "cuda":
                    torch.cuda.empty_cache()
    return rows


def _wda_host(row, X, y, P, V, reps, budget, deadline):
    """The NumPy columns of a WDA row (float64 on the host, from the same data)."""
    import ldr
    from ldr.data import arrays
    from ldr.objectives import WDA

    host = WDA(arrays.to_host(X).astype(float), arrays.to_host(y), WDA_R, reg=1.0,
               memory_budget=budget)
    Ph, Vh = arrays.to_host(P).astype(float), arrays.to_host(V).astype(float)
    t = _median(lambda: (host.cost(Ph), host.egrad(Ph)), reps, lambda: None)
    row[7] = common.fmt_time(t)
    row[8] = common.fmt_time(_median(lambda: host.ehvp(Ph, Vh), reps, lambda: None))
    if deadline.allows(FIT_CALLS * t):
        t0 = time.perf_counter()
        ldr.solve(host, "scf", xtol=1e-6)
        row[9] = common.fmt_time(time.perf_counter() - t0)
    else:
        row[9] = f"skipped: budget ({common.fmt_time(FIT_CALLS * t)} projected)"


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
            out["res"] = ldr.solve(sparse_pca(C, 2, backend), "trust-region", random_state=0)

        t = _median(solve, repeats, lambda: None)
        base = t if backend == "autograd" else base
        res = out["res"]
        rows.append([backend, common.fmt_time(t), common.fmt_ratio(t / base),
                     f"{res.cost:.10f}", res.n_iter])
    return rows


PAIRWISE_D = 20
#: (estimator, what its fit reads: None, "y" or "classes", how its time grows with n)
PAIRWISE = {
    "LPP": ("LPP", None, 2),
    "NPE": ("NPE", None, 2),
    "MDS": ("MDS", None, 1),
    "KernelSDR": ("KernelSDR", "y", 1),
    "WassersteinDA": ("WassersteinDA", "classes", 1),
    # the stochastic route past 2·10⁴ rows; its candidates' neighbours in the embedding and
    # LargeMarginDML's target neighbours are searched exactly by strips on the device: n²
    "NCA": ("NCA", "classes", 2),
    "LargeMarginDML": ("LargeMarginDML", "classes", 2),
    # k-means and WDA steps on the clusters (exact plans up to EXACT_MAX_CLASS rows a
    # cluster, batches beyond); these rows hold no clusters, so its alternation runs all
    # max_outer rounds and ends "no"
    "WDAClustering": ("WDAClustering", None, 1),
    # past EXACT_MAX_SAMPLES rows the W-step's Nyström features and the Nyström U-step: n
    "UnsupervisedHSIC": ("UnsupervisedHSIC", None, 1),
    "KDAC": ("KDAC", "classes", 1),
}


def _pairwise_data(n):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, PAIRWISE_D))
    B = np.linalg.qr(rng.standard_normal((PAIRWISE_D, 2)))[0]
    Z = X @ B
    y = np.sin(2 * Z[:, 0]) + Z[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    classes = (Z[:, 0] > 0).astype(int) + 2 * (Z[:, 1] > 0)
    return X, {"y": y, "classes": classes}


def pairwise_rows(device, sizes, sync, deadline, host_max):
    """Per n and estimator: one fit on the device under ``array_api_dispatch`` (its verdict and
    the device's peak memory) and, for n ≤ ``host_max``, the same fit in NumPy on the host;
    a fit skipped (and said so) when its projection from the smaller n would overrun the
    deadline."""
    import sklearn
    import torch

    import ldr.estimators as est

    rows, seen = [], {}
    for n in sizes:
        X, targets = _pairwise_data(n)
        Xt = torch.as_tensor(X, device=device)
        for name, (cls, reads, power) in PAIRWISE.items():
            row = [n, name] + [""] * 5
            rows.append(row)
            prev = [t * (n / m) ** power for (m, nm), t in seen.items() if nm == name]
            projected = max(prev) if prev else 0.0
            if not deadline.allows(2 * projected):
                row[2] = f"skipped: budget ({common.fmt_time(2 * projected)} projected)"
                _progress("pairwise", *row)
                continue
            args = (Xt,) if reads is None else (Xt, torch.as_tensor(targets[reads],
                                                                     device=device))
            try:
                if device == "cuda":
                    torch.cuda.reset_peak_memory_stats()
                sync()
                t0 = time.perf_counter()
                with sklearn.config_context(array_api_dispatch=True):
                    model = getattr(est, cls)(2).fit(*args)
                sync()
                seen[n, name] = t = time.perf_counter() - t0
                row[2] = common.fmt_time(t)
                # a clusterer's verdict: its alternation's (converged_) and its last W-step's
                converged = model.result_.converged and getattr(model, "converged_", True)
                row[3] = "yes" if converged else "no"
                row[4] = (f"{torch.cuda.max_memory_allocated() / 2**20:.0f} MB"
                          if device == "cuda" else "-")
                row[5] = f"{type(model.M_).__name__} {model.M_.device}"
                _progress("pairwise", *row)
                if n <= host_max and deadline.allows(2 * t):
                    host = (X,) if reads is None else (X, targets[reads])
                    t0 = time.perf_counter()
                    getattr(est, cls)(2).fit(*host)
                    row[6] = common.fmt_time(time.perf_counter() - t0)
                    _progress("pairwise NumPy", n, name, row[6])
            except Exception as exc:  # noqa: BLE001 — a row says what failed; go on
                import traceback

                traceback.print_exc()
                row[-1] = f"failed: {type(exc).__name__}: {str(exc)[:80]}"
            finally:
                model = None
                if device == "cuda":
                    torch.cuda.empty_cache()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds for the whole run; steps that would overrun are skipped "
                             "and say so (default: no limit)")
    parser.add_argument("--hsic-sizes", help="comma-separated n (default: the device's)")
    parser.add_argument("--pca-sizes", help="comma-separated n (default: the device's)")
    parser.add_argument("--wda-sizes", help="comma-separated n (default: the device's)")
    parser.add_argument("--pairwise-sizes", help="comma-separated n (default: the device's)")
    parser.add_argument("--host-max", type=int, default=1_000_000,
                        help="the largest n of the pairwise section's NumPy fits")
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--sections", default="hsic,pca,wda,pairwise,custom",
                        help="comma-separated, in the order to run: hsic, pca, wda, pairwise, "
                             "custom")
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
        wda_sizes = [2000, 4000]
        pairwise_sizes = [1000, 2000]
        name = "PyTorch-CPU, one thread"
        sync = lambda: None  # noqa: E731
    else:
        hsic_sizes, pca_n, budget = [10_000, 100_000, 1_000_000], 10_000_000, 16 * 2**30
        wda_sizes = [10_000, 100_000]
        pairwise_sizes = [100_000, 1_000_000, 10_000_000]
        name = torch.cuda.get_device_name(0)
        sync = torch.cuda.synchronize
    if args.hsic_sizes:
        hsic_sizes = [int(v) for v in args.hsic_sizes.split(",")]
    pca_sizes = [int(v) for v in args.pca_sizes.split(",")] if args.pca_sizes else [pca_n]
    if args.wda_sizes:
        wda_sizes = [int(v) for v in args.wda_sizes.split(",")]
    args.wda_size_list = wda_sizes
    args.pairwise_size_list = ([int(v) for v in args.pairwise_sizes.split(",")]
                               if args.pairwise_sizes else pairwise_sizes)
    deadline = Deadline(args.budget)
    common.print_header("ldr on an accelerator (bench_gpu.py)",
                        [f"device: {args.device} ({name}); torch {torch.__version__}; "
                         f"repeats: {args.repeats} (medians; 1 at n = 10⁶); wall time; "
                         f"budget: {args.budget or 'none'} s"])
    for section in args.sections.split(","):
        try:
            _section(section, args, hsic_sizes, pca_sizes, budget, sync, deadline)
        except Exception:  # noqa: BLE001 — print it, go on with the next section
            import traceback

            traceback.print_exc()
        sys.stdout.flush()
    return 0


def _section(section, args, hsic_sizes, pca_sizes, budget, sync, deadline) -> None:
    if section == "hsic":
        print(f"\n1. HSIC exact Φ on the device vs its GEMM + exp limit, and ISM fits "
              f"(d = {D}, q = {Q}, 4 classes; max_iter = 100, default gtol: "
              "1e-8, 2.3e-4 in float32)", flush=True)
        common.print_table(["n", "dtype", "block", "Φ", "GEMM+exp", "Φ ÷ limit",
                            "Φ NumPy", "ISM fit", "iter", "conv.", "Result.M"],
                           hsic_rows(args.device, hsic_sizes, args.repeats, sync, budget,
                                     deadline, args.dtypes))
    elif section == "pca":
        for pca_n in pca_sizes:
            print(f"\n2. PCA and orthogonal LDA from a {pca_n} × 100 tensor on "
                  f"{args.device}", flush=True)
            common.print_table(["method", "dtype", "ldr.solve", "of it: solver",
                                "ldr estimator",
                                "scikit-learn", "solve ÷ sklearn", "Result.M"],
                               pca_lda_rows(args.device, pca_n, min(args.repeats, 3),
                                            sync, deadline, args.dtypes))
    elif section == "wda":
        print(f"\n4. WDA on a tensor of {args.device} (3 classes, d = {WDA_D}, r = {WDA_R}, "
              "reg = 1, 10 Sinkhorn iterations; SCF fit with xtol 1e-6, 1e-5 in float32) "
              "vs NumPy float64 on the host", flush=True)
        common.print_table(["n", "dtype", "cost+grad", "HVP", "SCF fit", "iter", "conv.",
                            "NumPy c+g", "NumPy HVP", "NumPy fit", "Result.M"],
                           wda_rows(args.device, args.wda_size_list, min(args.repeats, 3),
                                    sync, budget, deadline, args.dtypes))
    elif section == "pairwise":
        print(f"\n5. The pairwise estimators wholly on {args.device} (n × {PAIRWISE_D}, r = 2, "
              "their defaults, float64, one fit each) vs NumPy on the host", flush=True)
        common.print_table(["n", "estimator", "fit", "conv.", "peak device memory", "M_",
                            "NumPy fit"],
                           pairwise_rows(args.device, args.pairwise_size_list, sync, deadline,
                                         args.host_max))
    elif section == "custom":
        print("\n3. Custom objective (sparse PCA 13 × 2, wine), trust region, CPU",
              flush=True)
        common.print_table(["backend", "solve", "÷ autograd", "cost", "iter"],
                           custom_rows(args.repeats))
    else:
        raise SystemExit(f"unknown section {section!r}: hsic, pca, wda, pairwise, custom")


if __name__ == "__main__":
    sys.exit(main())
