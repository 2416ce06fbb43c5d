"""The merged product of a rebuilt PyTorch graph (:mod:`ldr.torch_graphs`) on the CPU by the
faster of the two BLAS libraries in the process, PyTorch's or SciPy's.

A rebuilt derivative spends most of its time in one product ``β·D + α·Yᵀ R`` (the GEMM
``addmm``; ``R`` the d × d symmetric constant, ``Y`` thin).  PyTorch's CPU wheels bring
Intel's MKL, NumPy and SciPy bring OpenBLAS, and which is faster depends on the processor
and the shape: on the AMD EPYC of ldr's benchmarks (one thread, interleaved) MKL's product
took 1.15–1.4× OpenBLAS's for d × r from 100 × 5 to 1000 × 20; elsewhere the order may be
the other way.  So the choice is measured, not assumed: :func:`faster_on_cpu` times both
once per shape, type and thread count (milliseconds, when the first graph of that shape is
built) and keeps PyTorch's unless SciPy's is faster by more than ``MARGIN``.  The two
differ at rounding level only (each rebuilt graph is checked against autodiff), and on a
busy machine the choice may differ from one process to the next.  SciPy's ``gemm`` takes
the scales and the dense term (the same epilogue as ``addmm``) and NumPy views of the
tensors: nothing is copied but the dense term, which BLAS overwrites.
"""

from __future__ import annotations

import statistics
import time

#: SciPy's product is chosen only when it is faster than PyTorch's by more than this share
MARGIN = 0.1
#: (k, d, dtype, PyTorch's thread count) -> whether SciPy's BLAS is the faster
_CHOSEN: dict = {}
#: SciPy's gemm per NumPy type
_GEMM: dict = {}


def addmm(D, A, R, beta=1.0, alpha=1.0):
    """``β·D + α·A R`` by SciPy's BLAS, as ``torch.addmm`` (``D`` may be None: ``α·A R``),
    for CPU tensors of type float32 or float64, ``R`` symmetric and contiguous (in either
    order): BLAS reads it in its own order as it lies, which equals R (OpenBLAS's product
    with a transposed R took 1.4× the untransposed one's)."""
    import torch

    a, b = A.numpy(), R.numpy()
    b = b if b.flags.f_contiguous else b.T  # Rᵀ = R, in BLAS's column-major order
    gemm = _GEMM.get(b.dtype) or _gemm(b)
    trans_a = 0 if a.flags.f_contiguous else 1  # a transposed view: the same memory
    a = a if trans_a == 0 else a.T
    if D is None:
        return torch.from_numpy(gemm(alpha, a, b, trans_a=trans_a))
    return torch.from_numpy(gemm(alpha, a, b, beta, D.numpy(), trans_a=trans_a))


def _gemm(b):
    from scipy.linalg import blas

    _GEMM[b.dtype] = blas.get_blas_funcs("gemm", (b,))
    return _GEMM[b.dtype]


def faster_on_cpu(k: int, R) -> bool:
    """Whether SciPy's BLAS forms ``β·D + α·A R`` (A of shape k × d) faster than PyTorch's
    for ``R`` (a CPU tensor), timed once per shape, type and thread count."""
    import torch

    R = R.detach()  # a constant the cost closes over may require a gradient (a Parameter)
    if R.device.type != "cpu" or R.dtype not in (torch.float32, torch.float64) or not (
            R.is_contiguous() or R.t().is_contiguous()):
        return False
    key = (k, R.shape[0], R.dtype, torch.get_num_threads())
    if key not in _CHOSEN:
        g = torch.Generator().manual_seed(0)  # not the global one: the user's draws stay
        A = torch.randn(R.shape[0], k, dtype=R.dtype, generator=g).t()  # a thin Yᵀ's layout
        D = torch.randn(R.shape[0], k, dtype=R.dtype, generator=g).t()
        ours, theirs = _interleaved(lambda: addmm(D, A, R, 0.5, 2.0),
                                    lambda: torch.addmm(D, A, R, beta=0.5, alpha=2.0))
        _CHOSEN[key] = ours < (1 - MARGIN) * theirs
    return _CHOSEN[key]


def _interleaved(first, second, rounds: int = 7, budget: float = 0.25) -> tuple[float, float]:
    """The median times of two functions timed in alternation (each round a batch of calls
    lasting about a millisecond per function), so that a busy machine slows both alike; at
    least 3 rounds, fewer than ``rounds`` once ``budget`` seconds are spent."""
    for fn in (first, second):
        fn()
    start = t0 = time.perf_counter()
    first()
    number = max(1, int(1e-3 / max(time.perf_counter() - t0, 1e-7)))
    times: tuple[list, list] = ([], [])
    while len(times[1]) < rounds and (len(times[1]) < 3
                                      or time.perf_counter() - start < budget):
        for fn, out in zip((first, second), times):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - t0) / number)
    return statistics.median(times[0]), statistics.median(times[1])
