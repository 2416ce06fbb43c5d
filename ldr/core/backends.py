"""Autodiff backends: where an objective's gradient and Hessian-vector products come from.

An objective names its backend (``ldr.objective(cost, ..., backend="jax")``, or
``backend = "torch"`` in the body of an :class:`~ldr.Objective` subclass):

============  ====================================================  ==========================
backend       the cost is written with                              egrad, ehvp
============  ====================================================  ==========================
"autograd"    ``autograd.numpy`` (the default)                      ``autograd.grad``; the
                                                                    Hessian reverse over
                                                                    reverse
"jax"         ``jax.numpy``                                         ``jax.grad``; ``jax.jvp``
                                                                    of it (forward over
                                                                    reverse); each compiled
                                                                    once by ``jax.jit``
"torch"       PyTorch (``torch.*`` functions and tensor methods)    ``torch.func.grad``;
                                                                    ``torch.func.vjp`` of it
                                                                    (reverse over reverse);
                                                                    eager, or compiled by
                                                                    ``torch.compile`` on
                                                                    request
"numpy"       anything: nothing is differentiated                   hand-written only
============  ====================================================  ==========================

With ``"jax"`` and ``"torch"`` the cost (and a hand-written ``egrad``/``ehvp``) receives the
backend's arrays — ``jax.Array`` / ``torch.Tensor`` of float64, a tuple of them on a product
manifold — and the objective's ``cost(M)`` called with NumPy arrays returns a Python float,
so solvers, :func:`ldr.check`, certificates and estimators see what they see for autograd.
Called with the backend's own arrays, the oracles return the backend's arrays.

**JAX.**  The cost, its gradient and its Hessian-vector product are each compiled by
``jax.jit`` at their first call (and again only for a new shape).  JAX computes in float32
unless its 64-bit mode is on: the JAX backend turns it on
(``jax.config.update("jax_enable_x64", True)``, as pymanopt [2]_ does) when its first objective is
made, so create the cost's arrays after that or, better, enable it yourself first (a cost
that closes over float32 arrays gets a warning).  Costs whose Python control flow depends on
values cannot be traced by ``jax.jit``; they run uncompiled (a :class:`UserWarning` says so).

**PyTorch.**  The gradient is ``torch.func.grad`` of the cost and the product is
``torch.func.vjp`` of that gradient with the direction as cotangent (the Hessian being
symmetric, that is H V [1]_).  They run eagerly unless the objective asks for compilation
(``ldr.objective(..., backend="torch", compile=True)``, or ``compile = True`` in the class
body): then each is compiled by ``torch.compile`` at its first call (and again for a new
shape).  Compilation costs seconds (more for the first in a process), which a single solve
of a few hundred products does not win back, so it is not the default; it pays off over
long or repeated solves.  ``torch.compile`` caches its programs per Python function:
objectives that one function builds from different tensors (cross-validation folds, restarts)
share one program, and past ``torch._dynamo.config.recompile_limit`` distinct costs in one
process it runs the rest eagerly (with its own warning).  One route serves both modes:
eager ``torch.autograd`` is a little faster for a single call, but ``torch.compile`` cannot
differentiate it twice, while it compiles ``torch.func``'s transforms whole; and forward over
reverse (``torch.func.jvp`` of the gradient) measured slower than reverse over reverse eager
and several times slower compiled.  Eager, :meth:`TorchDerivatives.ehvp_at` forms the
gradient's VJP once per point, so each product of an inner solve is one reverse pass.  A cost
that ``torch.compile`` cannot capture whole (Python control flow on values, ``.item()``)
runs in pieces, its captured parts compiled.

**Speed against the arithmetic floor.**  The Hessian-vector product of ``tr(MᵀCM)`` needs
one GEMM, C·V.  Automatic differentiation of ``tr(MᵀCM)`` does not know that C is symmetric: the
product it computes multiplies by C and by Cᵀ, two GEMMs, so about twice the floor is what a
compiled generic autodiff gives; eager PyTorch and autograd add their per-operation
overhead.  An objective made with ``merge_symmetric=True`` has its derived gradient and
product rewritten so that each symmetric matrix the cost closes over is multiplied once:
JAX's traced programs before ``jax.jit`` compiles them (:mod:`ldr.core.symmetric_products`),
PyTorch's aten graphs, traced once per shape by ``make_fx`` and run as a
``torch.fx.GraphModule`` (compiled by ``torch.compile`` with ``compile=True``;
:mod:`ldr.core.aten_products`).  Exact algebra, checked against autodiff by their tests;
optional, as rewrites of programs that the compilers do not make themselves.
A hand-written ``ehvp`` (``-2 * (C @ V) + ...``; any backend) is the floor plus the
elementwise terms.

**Devices.**  JAX computes on its default device (a GPU where jaxlib has one).  PyTorch
computes on the CPU unless the objective names a ``device`` (``ldr.objective(...,
backend="torch", device="cuda")``, or ``device = "cuda"`` in the class body), where its
tensors live: each point is sent there and each gradient brought back.  The solver's own
geometry (d×r matrices) runs in NumPy on the host; an oracle's scalars and d×r results are
the only transfers.

JAX and PyTorch are optional (``pip install "ldr-manifold[jax]"``, ``"ldr-manifold[torch]"``)
and imported only when an objective asks for them; ``import ldr`` imports neither.

References
----------
.. [1] Pearlmutter, B. A. (1994). Fast exact multiplication by the Hessian. *Neural
   Computation* 6(1), 147–160 (H V as the derivative of the gradient along V).
.. [2] Townsend, J., Koep, N. and Weichwald, S. (2016). Pymanopt: a Python toolbox for
   optimization on manifolds using automatic differentiation. *JMLR* 17(137), 1–5.
"""

from __future__ import annotations

import contextlib
import importlib.util
import warnings
from collections.abc import Callable

import numpy as np

from ldr.core.errors import ParameterError

#: every backend, in the order the docs list them
BACKENDS = ("autograd", "jax", "torch", "numpy")
#: the backends that need an optional package: name → (module, pip extra)
OPTIONAL = {"jax": ("jax", "jax"), "torch": ("torch", "torch")}
#: the backends that differentiate a cost (all but "numpy")
AUTODIFF = ("autograd", "jax", "torch")


def validate(backend) -> str:
    """``backend`` if it names a backend whose package is installed, else a
    :class:`~ldr.core.errors.ParameterError` about ``backend`` (the list, or the pip command)."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ParameterError("backend", f"unknown backend {backend!r}; choose one of "
                                        f"{list(BACKENDS)}")
    if backend in OPTIONAL:
        module, extra = OPTIONAL[backend]
        if importlib.util.find_spec(module) is None:
            raise ParameterError("backend", (
                f"backend={backend!r} needs {module}, which is not installed: "
                f'pip install "ldr-manifold[{extra}]" (or pip install {module})'))
    return backend


def validate_options(backend: str, device=None, compile: bool = False,
                     merge_symmetric: bool = False) -> None:
    """A :class:`~ldr.core.errors.ParameterError` about ``device``, ``compile`` or
    ``merge_symmetric`` where ``backend`` does not take them: only PyTorch places points on a
    device and only its compilation is optional (JAX's is always on); ``merge_symmetric``
    rewrites JAX's and PyTorch's derived oracles, so the other backends refuse it."""
    if device is not None and backend != "torch":
        raise ParameterError("device", f"only backend='torch' places the points on a device; "
                                       f"got device={device!r} with backend={backend!r} (JAX "
                                       "computes on its default device)")
    if not isinstance(compile, bool):
        raise ParameterError("compile", f"expected True or False, got {compile!r}")
    if compile and backend != "torch":
        raise ParameterError("compile", f"only backend='torch' compiles on request; got "
                                        f"compile=True with backend={backend!r} (JAX always "
                                        "compiles with jax.jit)")
    if not isinstance(merge_symmetric, bool):
        raise ParameterError("merge_symmetric", f"expected True or False, got "
                                                f"{merge_symmetric!r}")
    if merge_symmetric and backend not in ("jax", "torch"):
        raise ParameterError("merge_symmetric", f"only backend='jax' and backend='torch' "
                                                f"merge the products by a symmetric matrix; "
                                                f"got backend={backend!r}")


def to_numpy(value):
    """A backend's array (or a tuple or list of them) as a fresh float64 NumPy array (or
    tuple): the answers of :class:`Derivatives` share memory with nothing."""
    if isinstance(value, (tuple, list)):
        return tuple(to_numpy(v) for v in value)
    if hasattr(value, "detach"):  # a torch.Tensor, perhaps on a device
        value = value.detach().cpu().numpy()
    return np.array(value, dtype=np.float64)


def as_tuple(value):
    """A list (a point on a product manifold) as a tuple; anything else as it is."""
    return tuple(value) if isinstance(value, list) else value


class Derivatives:
    """An objective's cost, gradient and Hessian-vector product in one backend, built once
    per objective (:meth:`ldr.Objective.derivatives`) from its raw ``cost`` (written for the
    backend) and any hand-written ``egrad``/``ehvp`` (also written for it).

    Called with NumPy arrays (float64 or not; a tuple or list of them on a product manifold),
    each oracle returns NumPy (``cost``: a float); called with the backend's arrays, the
    backend's.

    Parameters
    ----------
    backend : {"jax", "torch"}
    cost : callable
        ``cost(M)``, a scalar of the backend.
    egrad, ehvp : callable or None
        Hand-written ``egrad(M)`` and ``ehvp(M, V)`` for the backend's arrays; None: the
        backend's derivatives of ``cost`` (of ``egrad`` for the product).
    device : str or torch.device, optional
        PyTorch only: where the cost's tensors live (None: the CPU).
    compile : bool
        PyTorch only: compile the oracles with ``torch.compile``.
    merge_symmetric : bool
        JAX and PyTorch: one product per symmetric matrix the cost closes over in the derived
        gradient and product (:mod:`ldr.core.symmetric_products`,
        :mod:`ldr.core.aten_products`).
    """

    def __init__(self, backend: str, cost: Callable, egrad: Callable | None = None,
                 ehvp: Callable | None = None, device=None, compile: bool = False,
                 merge_symmetric: bool = False):
        self.backend = backend
        self.raw_cost = cost
        self.raw_egrad = egrad
        self.raw_ehvp = ehvp
        self.device = device
        self.compile = compile
        self.merge_symmetric = merge_symmetric

    def __reduce__(self):  # pickles (joblib, Dask) as what it is built from, rebuilt there
        return derivatives, (self.backend, self.raw_cost, self.raw_egrad, self.raw_ehvp,
                             self.device, self.compile, self.merge_symmetric)

    def cost(self, M):
        return self.call("cost", M)

    def egrad(self, M):
        return self.call("egrad", M)

    def ehvp(self, M, V):
        return self.call("ehvp", M, V)

    def ehvp_at(self, M):
        """``V ↦ ehvp(M, V)`` at a fixed ``M``."""
        return lambda V: self.ehvp(M, V)

    def call(self, name: str, *args):
        """The oracle ``name`` ("cost", "egrad" or "ehvp") at ``args``: the backend's arrays
        in and out, or NumPy in and NumPy out (``cost``: a float)."""
        if self.is_native(args[0]):
            return self.run(name, *(as_tuple(a) for a in args))
        out = self.run(name, *(self.from_numpy(a) for a in args))
        return float(out) if name == "cost" else to_numpy(out)

    def is_native(self, M) -> bool:
        """Whether ``M`` (or the first factor of a product point) is the backend's array."""
        raise NotImplementedError

    def from_numpy(self, M):
        """A NumPy point (or tuple or list of them) as the backend's float64 array(s)."""
        raise NotImplementedError

    def run(self, name: str, *args):
        """The oracle ``name`` on the backend's arrays."""
        raise NotImplementedError


class JaxDerivatives(Derivatives):
    """``jax.grad`` of the cost and ``jax.jvp`` of that gradient (forward over reverse), each
    compiled by ``jax.jit`` (retraced only for a new shape); a hand-written ``egrad`` takes the
    gradient's place (its ``jax.jvp`` is then the product).  With ``merge_symmetric``, the
    derived gradient and product are rewritten by :func:`ldr.core.symmetric_products.merged`
    before ``jax.jit`` compiles them."""

    def __init__(self, backend, cost, egrad=None, ehvp=None, device=None, compile=False,
                 merge_symmetric=False):
        super().__init__(backend, cost, egrad, ehvp, device, compile, merge_symmetric)
        import jax

        jax.config.update("jax_enable_x64", True)
        self.jax = jax
        grad = egrad if egrad is not None else jax.grad(cost)

        def hvp(M, V):
            return jax.jvp(grad, (M,), (V,))[1]

        #: the oracles as written, for a cost ``jax.jit`` cannot trace
        self.plain = {"cost": cost, "egrad": grad, "ehvp": ehvp if ehvp is not None else hvp}
        derived = {"egrad": egrad is None, "ehvp": ehvp is None}
        traced = dict(self.plain)
        if merge_symmetric:
            from ldr.core.symmetric_products import merged

            traced.update({name: merged(self.plain[name]) for name, by_autodiff
                           in derived.items() if by_autodiff})
        self.compiled = {name: jax.jit(fn) for name, fn in traced.items()}
        self.checked = False

    def is_native(self, M) -> bool:
        first = M[0] if isinstance(M, (tuple, list)) else M
        return isinstance(first, self.jax.Array)  # tracers are jax.Arrays too

    def from_numpy(self, M):
        if isinstance(M, (tuple, list)):
            return tuple(self.from_numpy(m) for m in M)
        return np.asarray(M, dtype=np.float64)  # jax.jit places it on its device

    def check_precision(self, M):
        """Warn, once, when the cost closes over arrays of less than float64 (made before
        64-bit mode was on): its answers would be float32's."""
        self.checked = True
        try:
            consts = self.jax.make_jaxpr(self.raw_cost)(M).consts
        except Exception:  # noqa: BLE001 - untraceable costs are reported by run
            return
        low = sorted({str(c.dtype) for c in consts if hasattr(c, "dtype")
                      and np.issubdtype(c.dtype, np.floating) and c.dtype.itemsize < 8})
        if low:
            warnings.warn(
                f"the cost's arrays include {', '.join(low)} ones (made before JAX's 64-bit "
                "mode was on?): its answers will be accurate to about 1e-7.  Call "
                'jax.config.update("jax_enable_x64", True) before creating them',
                UserWarning, stacklevel=5)

    def run(self, name, *args):
        if not self.checked:
            self.check_precision(args[0])
        try:
            return self.compiled[name](*args)
        except self.jax.errors.JAXTypeError as exc:  # value-dependent Python control flow
            warnings.warn(f"jax.jit cannot trace this objective's {name} "
                          f"({type(exc).__name__}); it runs uncompiled", UserWarning,
                          stacklevel=5)
            self.compiled[name] = self.plain[name]
            return self.plain[name](*args)


class TorchDerivatives(Derivatives):
    """``torch.func.grad`` of the cost and ``torch.func.vjp`` of that gradient with the
    direction as cotangent (reverse over reverse; H is symmetric, so the VJP is H V), run
    eagerly or, with ``compile=True``, each compiled by ``torch.compile`` (module docstring);
    a hand-written ``egrad`` takes the gradient's place.  NumPy points become float64
    tensors on the CPU without a copy, or are sent to ``device``.

    Eager, :meth:`ehvp_at` forms the gradient's VJP once per point (the cost's forward pass
    and its gradient), and each product of an inner solve is one reverse pass through it.
    """

    def __init__(self, backend, cost, egrad=None, ehvp=None, device=None, compile=False,
                 merge_symmetric=False):
        super().__init__(backend, cost, egrad, ehvp, device, compile, merge_symmetric)
        import torch
        import torch.func

        self.torch = torch
        try:
            self.target = None if device is None else torch.device(device)
        except (RuntimeError, TypeError) as exc:
            raise ParameterError("device", f"not a PyTorch device: {device!r} ({exc})") from None
        self.grad = egrad if egrad is not None else torch.func.grad(cost)
        fns = {"cost": cost, "egrad": self.grad, "ehvp": ehvp if ehvp is not None else self.hvp}
        derived = {"egrad": egrad is None, "ehvp": ehvp is None}
        # compiled lazily by torch.compile at the first call (dynamic=False: one program per
        # shape, as jax.jit's)
        self.fns = {name: torch.compile(fn, dynamic=False) for name, fn in fns.items()} \
            if compile else fns
        if merge_symmetric:  # rebuilt per shape, then compiled with compile
            from ldr.core.aten_products import merged

            self.fns.update({name: merged(fns[name], compile) for name, by_autodiff
                             in derived.items() if by_autodiff})

    def hvp(self, M, V):
        """H V, the VJP of the gradient at ``M`` with cotangent ``V``."""
        return self.torch.func.vjp(self.grad, M)[1](V)[0]

    def is_native(self, M) -> bool:
        first = M[0] if isinstance(M, (tuple, list)) else M
        return isinstance(first, self.torch.Tensor)

    def from_numpy(self, M):
        if isinstance(M, (tuple, list)):
            return tuple(self.from_numpy(m) for m in M)
        M = np.asarray(M, dtype=np.float64)
        if not M.flags.writeable or any(s < 0 for s in M.strides):  # from_numpy's limits;
            M = np.array(M, order="C")  # any positive strides (Fortran order) are shared
        T = self.torch.from_numpy(M)
        return T if self.target is None else T.to(self.target)

    def recording(self, M):
        """The context of a call at ``M``: the caller's tensors as they are (autograd may be
        recording through them), NumPy points under ``torch.no_grad`` (``torch.func``'s
        transforms differentiate inside it; a constant that requires a gradient records
        nothing)."""
        return contextlib.nullcontext() if self.is_native(M) else self.torch.no_grad()

    def call(self, name, *args):
        with self.recording(args[0]):
            return super().call(name, *args)

    def run(self, name, *args):
        return self.fns[name](*args)

    def ehvp_at(self, M):
        if self.raw_ehvp is not None or self.compile or self.merge_symmetric:
            return super().ehvp_at(M)
        native = self.is_native(M)
        with self.recording(M):
            vjp = self.torch.func.vjp(self.grad, as_tuple(M) if native
                                      else self.from_numpy(M))[1]  # the point's work, once

        def product_at(V):
            with self.recording(M):
                HV = vjp(as_tuple(V) if native else self.from_numpy(V))[0]
            return HV if native else to_numpy(HV)
        return product_at


def derivatives(backend: str, cost: Callable, egrad: Callable | None = None,
                ehvp: Callable | None = None, device=None, compile: bool = False,
                merge_symmetric: bool = False) -> Derivatives:
    """The :class:`Derivatives` of ``cost`` in ``backend`` ("jax" or "torch"); ``device``
    (PyTorch only: "cuda", "cuda:1", a ``torch.device``) is where the cost's tensors live and
    the points are sent (None: the CPU); ``compile`` (PyTorch only) compiles the oracles with
    ``torch.compile``; ``merge_symmetric`` (JAX and PyTorch) multiplies each symmetric
    matrix the cost closes over once (:mod:`ldr.core.symmetric_products`,
    :mod:`ldr.core.aten_products`)."""
    validate(backend)
    validate_options(backend, device, compile, merge_symmetric)
    if backend == "jax":
        return JaxDerivatives(backend, cost, egrad, ehvp, merge_symmetric=merge_symmetric)
    if backend == "torch":
        return TorchDerivatives(backend, cost, egrad, ehvp, device, compile, merge_symmetric)
    raise ParameterError("backend", f"{backend!r} converts no arrays: only 'jax' and 'torch' "
                                    "have Derivatives")
