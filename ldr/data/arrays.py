"""Array namespaces: the driver, the geometry, the solvers and the objectives compute in the
namespace and on the device of the arrays they are given (NumPy, PyTorch, CuPy, JAX,
array-api-strict), through `array-api-compat <https://data-apis.org/array-api-compat/>`_.

Every computation is written once, against the array API standard (NumPy >= 2 is itself such
a namespace), with ``xp = namespace(x)``.  :func:`namespace` answers ``numpy`` for NumPy arrays
and Python scalars without importing array-api-compat, and ``autograd.numpy`` for autograd's
traced values, so that a cost written with the functions common to the three (operators,
``sum``, ``exp``, ``log``, ...) is also traceable.  The functions here use only the array API
standard (and its ``linalg`` extension): no transfer to the host except the Python scalars
they return (:func:`vdot`), which are what the stopping rules read.
The NumPy-only fast paths are NumPy's ``out=``, behind :func:`exp_inplace`,
:func:`maximum_inplace`, :func:`fill_where` and :class:`Buffers` (the benchmarks that measure
them are named there); other namespaces get the same results in new arrays.  The one
operation the standard lacks that a computation here needs, a scatter-add, is
:func:`index_add`: each library's own where it has one.  The manifolds' polar factor, QR
and largest eigenvalue are :mod:`ldr.core.linalg`'s.
"""

from __future__ import annotations

import math

import numpy as np

#: the packages whose arrays are computed on in their own namespace (Dask's are read lazily,
#: in chunks, as before)
_ARRAY_PACKAGES = frozenset({"torch", "cupy", "jax", "jaxlib", "array_api_strict", "dpctl"})


def _is_other(a) -> bool:
    t = type(a)
    if t is np.ndarray or a is None or isinstance(a, (np.ndarray, np.generic, float, int, str)):
        return False
    return t.__module__.partition(".")[0] in _ARRAY_PACKAGES


def foreign(*arrays):
    """The array-api-compat namespace of the arrays among ``arrays`` that are arrays of
    another namespace than NumPy (a PyTorch tensor, a CuPy array, ...), or None when there are
    none (NumPy arrays, scalars, autograd boxes, Dask arrays); array-api-compat is imported
    only then."""
    others = [a for a in arrays if _is_other(a)]
    if not others:
        return None
    try:
        import array_api_compat as compat
    except ImportError as exc:  # pragma: no cover - installed with every array library's use
        raise ImportError("computing on arrays of another namespace than NumPy needs "
                          "array-api-compat: pip install array-api-compat") from exc
    return compat.array_namespace(*others)


def in_memory(a) -> bool:
    """Whether ``a`` is an in-memory array — NumPy's (a memmap included) or another
    namespace's — rather than a Dask collection, a DataFrame, an iterator or a list."""
    return isinstance(a, np.ndarray) or foreign(a) is not None


def traced(a) -> bool:
    """Whether ``a`` is a value traced by autograd (an ``ArrayBox``)."""
    return type(a).__module__.startswith("autograd.")


def namespace(*arrays):
    """The namespace to compute on ``arrays`` in: :func:`foreign`'s, ``autograd.numpy`` when
    one of them is traced by autograd, else ``numpy``."""
    if len(arrays) == 1 and type(arrays[0]) is np.ndarray:
        return np
    if any(traced(a) for a in arrays):
        import autograd.numpy as anp

        return anp
    xp = foreign(*arrays)
    return np if xp is None else xp


def device(a):
    """The device ``a`` lives on (None for NumPy)."""
    if foreign(a) is None:
        return None
    import array_api_compat as compat

    return compat.device(a)


def to_host(a) -> np.ndarray:
    """``a`` as a NumPy array on the host (a tuple element-wise; NumPy arrays as they are)."""
    if isinstance(a, tuple):
        return tuple(to_host(v) for v in a)
    if a is None:
        return None
    if foreign(a) is None:
        return np.asarray(a)
    import array_api_compat as compat

    if compat.is_torch_array(a):
        return a.detach().cpu().numpy()
    if compat.is_cupy_array(a):
        return a.get()
    try:
        return np.asarray(a)
    except (TypeError, ValueError, RuntimeError):
        return np.from_dlpack(a)


def host_float64(a) -> np.ndarray:
    """``a`` (of any namespace) as a float64 NumPy array on the host: a small result (a sum
    over the rows, a d×d or m×m matrix) for SciPy or the host's algebra."""
    return np.asarray(to_host(a), dtype=np.float64)


def like(a, ref):
    """``a`` (NumPy, or a tuple of arrays) in the namespace, on the device and in the float
    dtype of ``ref`` (an array, or a tuple whose first element is one); ``a`` as it is when
    ``ref`` is NumPy."""
    if isinstance(ref, tuple):
        ref = ref[0]
    if isinstance(a, tuple):
        return tuple(like(v, ref) for v in a)
    xp = foreign(ref)
    if xp is None:
        return a
    if foreign(a) is xp and device(a) == device(ref) and a.dtype == ref.dtype:
        return a
    return xp.asarray(np.ascontiguousarray(to_host(a)), dtype=ref.dtype, device=device(ref))


def as_point(M, ref):
    """``M`` (a point or tangent vector) as an array of ``ref``'s namespace, device and float
    dtype — an objective's rows — or as it is when it already is one or is traced by
    autograd (NumPy lists and integer arrays become float arrays)."""
    if traced(M) or (type(M) is type(ref) and M.dtype == ref.dtype):
        return M
    return namespace(ref).asarray(like(M, ref), dtype=ref.dtype, device=device(ref))


def transpose(A):
    """Aᵀ of a matrix, or of each matrix of a stack."""
    return A.mT


def transposed_rows(A):
    """Aᵀ of a matrix as a new array stored row by row (one copy; ``A.T`` is a view, stored
    column by column): BLAS multiplies by it faster where it has few rows (the inner
    dimension of a product with a few columns)."""
    xp = namespace(A)
    return xp.stack([A[:, j] for j in range(A.shape[1])], axis=0)


def numpy_fast_path(*arrays) -> bool:
    """Whether every argument is a plain NumPy array: the one test behind which the library
    keeps a NumPy-only fast path (BLAS or LAPACK called directly, NumPy's ``out=``) beside the
    array API code that computes the same result in every namespace.  Each caller names the
    benchmark that justifies its fast path; a subclass, a traced value or another namespace's
    array takes the array API code."""
    return all(type(a) is np.ndarray for a in arrays)


def vdot(a, b) -> float:
    """⟨a, b⟩ = Σ a ∘ b of real arrays as a Python float (the one scalar that crosses to the
    host): the dot product of the flattened arrays."""
    if numpy_fast_path(a):  # BLAS's dot without the gufunc's overhead, the same bits
        # benchmark: benchmarks/bench_real.py --no-cv
        return float(np.vdot(a, b))
    xp = namespace(a)
    return float(xp.vecdot(xp.reshape(a, (-1,)), xp.reshape(b, (-1,))))


def same(a, b) -> bool:
    """Whether ``a`` (or None) and ``b``, arrays of one namespace, hold the same values (the
    per-point caches of the objectives: a point changed in place is a new point)."""
    if a is None:
        return False
    if a is b:
        return True
    if a.shape != b.shape:
        return False
    if numpy_fast_path(a, b):  # compared as bytes
        # benchmark: benchmarks/bench_real.py --no-cv
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return bool(namespace(b).all(a == b))


def norm(a) -> float:
    """The Frobenius norm of ``a`` (all its entries) as a Python float."""
    xp = namespace(a)
    return float(xp.linalg.vector_norm(a))


def matrix_norms(A):
    """The Frobenius norm of each matrix of a stack (k, d, r), as an array."""
    xp = namespace(A)
    return xp.linalg.vector_norm(A, axis=(-2, -1))


def relative_change(M, N) -> float:
    """‖N − M‖_F / max(‖M‖_F, ‖N‖_F) (the largest over a stack's matrices)."""
    xp = namespace(M)
    if M.ndim == 2:
        return norm(N - M) / max(norm(M), norm(N), 1e-300)
    size = xp.maximum(matrix_norms(M), matrix_norms(N))
    return float(xp.max(matrix_norms(N - M) / xp.where(size > 0, size, xp.ones_like(size))))


def frobenius(A: np.ndarray):
    """‖A‖_F of a NumPy array as ``np.linalg.norm(A)`` computes it (√ of the flattened dot
    product: the same rounding) without its argument handling, which is most of its time on
    a small array (the driver measures every step with it)."""
    if A.dtype != np.float64:
        return np.linalg.norm(A)
    x = A.ravel(order="K")
    return math.sqrt(x.dot(x))


def max_abs(a) -> float:
    xp = namespace(a)
    return float(xp.max(xp.abs(a))) if math.prod(a.shape) else 0.0


def singular_values(A):
    xp = namespace(A)
    return xp.linalg.svdvals(A)


def eigh(A):
    """``(w, V)`` of the symmetric matrix ``A``, ascending."""
    xp = namespace(A)
    return xp.linalg.eigh(A)


def zeros_like(a):
    if isinstance(a, tuple):
        return tuple(zeros_like(v) for v in a)
    return namespace(a).zeros_like(a)


def itemsize(a) -> int:
    """Bytes per entry of the floating (real or complex) array ``a``."""
    xp = namespace(a)
    bits = xp.finfo(a.dtype).bits
    return bits // 4 if xp.isdtype(a.dtype, "complex floating") else bits // 8


def exp_inplace(a):
    """exp(a), written over ``a`` (which the caller no longer needs) where the namespace
    allows it: NumPy's ``out=`` keeps one block buffer instead of a new, page-faulted one per
    call; a new array elsewhere (the array API has no ``out=``)."""
    # benchmark: benchmarks/bench_hsic.py --profile digits
    if numpy_fast_path(a) and a.flags.writeable:
        return np.exp(a, out=a)
    return namespace(a).exp(a)


def maximum_inplace(a, value: float):
    """max(a, value), written over ``a`` (which the caller no longer needs) where the namespace
    allows it (NumPy's ``out=``), a new array elsewhere: as :func:`exp_inplace`."""
    # benchmark: benchmarks/bench_pairwise_scale.py --methods nca
    if numpy_fast_path(a) and a.flags.writeable:
        return np.maximum(a, value, out=a)
    return namespace(a).clip(a, value, None)


def minimum_inplace(a, value: float):
    """min(a, value), written over ``a`` (which the caller no longer needs) where the namespace
    allows it (NumPy's ``out=``), a new array elsewhere: as :func:`exp_inplace`."""
    # benchmark: benchmarks/bench_hsic_scale.py --sections approx
    if numpy_fast_path(a) and a.flags.writeable:
        return np.minimum(a, value, out=a)
    return namespace(a).clip(a, None, value)


def fill_where(a, mask, value: float):
    """``a`` with ``value`` where ``mask`` holds, written over ``a`` (which the caller no
    longer needs) for NumPy, a new array elsewhere (``where``: JAX's arrays are immutable)."""
    # benchmark: benchmarks/bench_pairwise_scale.py --methods nca
    if numpy_fast_path(a) and a.flags.writeable:
        np.copyto(a, value, where=mask)
        return a
    return namespace(a).where(mask, value, a)


def index_add(n: int, index, values):
    """The (n, r) sums out[j] = Σ_{e: index[e] = j} values[e] (a scatter-add, which the array
    API standard lacks), in the namespace and on the device of ``values`` (m×r; ``index``
    m integers there): NumPy's ``bincount`` column by column, PyTorch's ``index_add``,
    CuPy's ``scatter_add``, elsewhere segment sums of the entries sorted by index
    (``cumulative_sum`` differences: exact to rounding on the tests' sizes)."""
    xp = namespace(values)
    r = values.shape[1]
    if numpy_fast_path(values):
        idx = np.asarray(index).ravel()
        return np.stack([np.bincount(idx, weights=values[:, j], minlength=n)
                         for j in range(r)], axis=1) if r else np.zeros((n, 0))
    import array_api_compat as compat

    out = xp.zeros((n, r), dtype=values.dtype, device=device(values))
    if compat.is_torch_array(values):
        return out.index_add_(0, index, values)
    if compat.is_cupy_array(values):
        import cupyx

        cupyx.scatter_add(out, index, values)
        return out
    order = xp.argsort(index)
    keys = xp.take(index, order)
    sums = xp.cumulative_sum(xp.take(values, order, axis=0), axis=0, include_initial=True)
    ends = xp.searchsorted(keys, xp.arange(n + 1, dtype=keys.dtype, device=device(values)))
    return xp.take(sums, ends[1:], axis=0) - xp.take(sums, ends[:-1], axis=0)


class Buffers:
    """Reusable output arrays for the products of a loop over row blocks.

    ``matmul(a, b, key)`` is ``a @ b`` and ``multiply(a, b, key)`` is ``a * b``, written, for
    NumPy, into the buffer kept under ``key`` (allocated at the first, largest block; a later
    product under the same key overwrites it, so the caller is done with the previous one):
    a fresh b×n array per block costs its page faults every time (the C library returns
    such blocks to the system) — the NumPy-only fast path of the row-block loops.  Other
    namespaces (the array API has no ``out=``) get new arrays."""
    # benchmark: benchmarks/bench_hsic.py --profile digits

    def __init__(self):
        self._kept = {}

    def _out(self, key, shape, dtype):
        buf = self._kept.get(key)
        if buf is None or buf.shape[0] < shape[0] or buf.shape[1:] != shape[1:] \
                or buf.dtype != dtype:
            buf = np.empty(shape, dtype=dtype)
            self._kept[key] = buf
        return buf[:shape[0]]

    def matmul(self, a, b, key):
        if type(a) is not np.ndarray or type(b) is not np.ndarray:
            return a @ b
        return np.matmul(a, b, out=self._out(key, (a.shape[0], b.shape[1]),
                                             np.result_type(a, b)))

    def multiply(self, a, b, key):
        if type(a) is not np.ndarray:
            return a * b
        shape = np.broadcast_shapes(a.shape, np.shape(b))
        return np.multiply(a, b, out=self._out(key, shape, np.result_type(a, b)))


def eye_like(n: int, ref):
    xp = namespace(ref)
    return xp.eye(n, dtype=ref.dtype, device=device(ref))


def all_finite(a) -> bool:
    xp = namespace(a)
    return bool(xp.all(xp.isfinite(a)))


def any_nan(a) -> bool:
    xp = namespace(a)
    return bool(xp.any(xp.isnan(a)))


def eps(a) -> float:
    """The machine epsilon of ``a``'s float dtype (float64's for NumPy)."""
    xp = namespace(a)
    return float(xp.finfo(a.dtype).eps) if xp.isdtype(a.dtype, "real floating") else 2.0**-52


def input_space(X):
    """``(xp, device)`` of ``X`` when scikit-learn's ``array_api_dispatch`` is on and ``X`` is
    an array of another namespace than NumPy (PyTorch, CuPy, array-api-strict); None for
    NumPy, lists, DataFrames, Dask arrays (read lazily) or without the setting."""
    if X is None or isinstance(X, np.ndarray) or foreign(X) is None:
        return None
    import sklearn

    if not sklearn.get_config().get("array_api_dispatch", False):
        return None
    xp = namespace(X)
    return xp, device(X)


def described(space) -> str:
    """``space = (xp, device)`` (None: NumPy) in words, for messages."""
    if space is None:
        return "numpy (device None)"
    return f"{space[0].__name__} (device {space[1]})"
