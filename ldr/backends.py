"""Autodiff backends: where an objective's gradient and Hessian-vector products come from.

An objective names its backend (``ldr.objective(cost, ..., backend="jax")``, or
``backend = "torch"`` in the body of an :class:`~ldr.Objective` subclass):

============  ====================================================  ========================
backend       the cost is written with                              egrad, ehvp
============  ====================================================  ========================
"autograd"    ``autograd.numpy`` (the default)                      ``autograd.grad``; the
                                                                    Hessian reverse over
                                                                    reverse
"jax"         ``jax.numpy``                                         ``jax.grad``; ``jax.jvp``
                                                                    of it (forward over
                                                                    reverse); compiled once
                                                                    with ``jax.jit``
"torch"       PyTorch (``torch.*`` functions and tensor methods)    ``torch.autograd.grad``;
                                                                    the Hessian reverse over
                                                                    reverse, its graph built
                                                                    once per point
"numpy"       anything: nothing is differentiated                   hand-written only
============  ====================================================  ========================

With ``"jax"`` and ``"torch"`` the cost (and a hand-written ``egrad``/``ehvp``) receives the
backend's arrays — ``jax.Array`` / ``torch.Tensor`` of float64, a tuple of them on a product
manifold — and the objective's ``cost(M)`` called with NumPy arrays returns a Python float,
so solvers, :func:`ldr.check`, certificates and estimators see what they see for autograd.
JAX computes in float32 unless 64-bit mode is on: the JAX backend turns it on
(``jax.config.update("jax_enable_x64", True)``, as pymanopt does) when its first objective
is made, so create the cost's arrays after that or, better, enable it yourself first (a
cost that closes over float32 arrays gets a warning).  Costs whose
Python control flow depends on values cannot be traced by ``jax.jit``; they run uncompiled
(a :class:`UserWarning` says so).  PyTorch's gradient and product are ``torch.autograd``'s,
traced once per shape on fake tensors and rebuilt as one small graph
(:mod:`ldr.torch_graphs`); costs that cannot be traced so run eagerly.  ``torch.func``
measured slower than ``torch.autograd`` on the CPU, and ``torch.compile`` costs seconds to
tens of seconds per objective (:class:`TorchDerivatives`; ``benchmarks/bench_backends.py``).

**Speed against the arithmetic floor** (``benchmarks/bench_backends.py --floor-only``: the
README's sparse PCA at d × r = 500 × 10, one thread).  Its Hessian-vector product needs one
GEMM, C·V.  Automatic differentiation of ``tr(MᵀCM)`` does not know that C is symmetric: the
product it computes multiplies by C and by Cᵀ, two GEMMs.  The JAX backend re-evaluates the
traced gradient and product so that each symmetric matrix the cost closes over is multiplied
once (:mod:`ldr.symmetric_products`: exact algebra, then XLA compiles one GEMM); the PyTorch
backend does the same on its aten graph and drops what autodiff's bookkeeping adds
(:mod:`ldr.torch_graphs`; on the CPU its one product by the faster of PyTorch's and SciPy's
BLAS, timed once per shape), then runs the dozen operations left eagerly; autograd pays its
per-operation Python overhead.  A
hand-written ``ehvp`` (``-2 * (C @ V) + ...``; any backend) is the floor plus the elementwise
terms.

**Devices.**  JAX computes on its default device (a GPU where jaxlib has one).  PyTorch
computes on the CPU unless the objective names a ``device`` (``ldr.objective(...,
backend="torch", device="cuda")``, or ``device = "cuda"`` in the class body), where its
tensors live: each point is sent there and each gradient brought back.  The solver's own
geometry (d×r matrices) runs in NumPy on the host; an oracle's scalars and d×r results are
the only transfers.

JAX and PyTorch are optional (``pip install "ldr-manifold[jax]"``, ``"ldr-manifold[torch]"``)
and imported only when an objective asks for them; ``import ldr`` imports neither.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable

import numpy as np

from ldr.errors import ParameterError
from ldr.symmetric_products import merged

#: every backend, in the order the docs list them
BACKENDS = ("autograd", "jax", "torch", "numpy")
#: the backends that need an optional package: name → (module, pip extra)
OPTIONAL = {"jax": ("jax", "jax"), "torch": ("torch", "torch")}
#: the backends that differentiate a cost (all but "numpy")
AUTODIFF = ("autograd", "jax", "torch")


def validate(backend) -> str:
    """``backend`` if it names a backend whose package is installed, else a
    :class:`~ldr.errors.ParameterError` about ``backend`` (the list, or the pip command)."""
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


def _numpy(value):
    """A backend's array (or tuple of them) as a fresh NumPy float array (or tuple)."""
    if isinstance(value, (tuple, list)):
        return tuple(_numpy(v) for v in value)
    return np.array(value, dtype=float)


def _tuple(value):
    """A list (a point on a product manifold) as a tuple; anything else as it is."""
    return tuple(value) if isinstance(value, list) else value


class Derivatives:
    """An objective's cost, gradient and Hessian-vector product in one backend, built once
    per objective (:meth:`ldr.Objective.derivatives`) from its raw ``cost`` (written for the
    backend) and any hand-written ``egrad``/``ehvp`` (also written for it).  Called with NumPy
    arrays, each returns NumPy (``cost``: a float); called with the backend's arrays, the
    backend's."""

    def __init__(self, backend: str, cost: Callable, egrad: Callable | None = None,
                 ehvp: Callable | None = None, device=None):
        self.backend, self.raw_cost = backend, cost
        self.raw_egrad, self.raw_ehvp = egrad, ehvp
        self.device = device

    def __reduce__(self):  # pickles (joblib, Dask) as what it is built from, rebuilt there
        return derivatives, (self.backend, self.raw_cost, self.raw_egrad, self.raw_ehvp,
                             self.device)

    def cost(self, M):
        raise NotImplementedError

    def egrad(self, M):
        raise NotImplementedError

    def ehvp(self, M, V):
        raise NotImplementedError

    def ehvp_at(self, M):
        """``V ↦ ehvp(M, V)`` at a fixed ``M``."""
        return lambda V: self.ehvp(M, V)


class JaxDerivatives(Derivatives):
    """``jax.grad`` of the cost, and ``jax.jvp`` of that gradient (forward over reverse),
    each compiled once by ``jax.jit`` (retraced only for a new shape), with one product per
    symmetric matrix the cost closes over where autodiff makes two
    (:mod:`ldr.symmetric_products`)."""

    def __init__(self, backend, cost, egrad=None, ehvp=None, device=None):
        super().__init__(backend, cost, egrad, ehvp, device)
        import jax

        jax.config.update("jax_enable_x64", True)
        self._jax = jax
        grad = egrad if egrad is not None else jax.grad(cost)

        def hvp(M, V):
            return jax.jvp(grad, (M,), (V,))[1]

        self._plain = {"cost": cost, "egrad": grad, "ehvp": ehvp if ehvp is not None else hvp}
        # autodiff's products, with one product per symmetric matrix the cost closes over
        derived = {"egrad": egrad is None, "ehvp": ehvp is None}
        self._fns = {name: jax.jit(merged(fn) if derived.get(name) else fn)
                     for name, fn in self._plain.items()}

    def _is_native(self, M) -> bool:
        first = M[0] if isinstance(M, (tuple, list)) else M
        return isinstance(first, self._jax.Array)  # tracers are jax.Arrays too

    def _check_precision(self, M):
        """Warn, once, when the cost closes over arrays of less than float64 (made before
        64-bit mode was on): its answers would be float32's."""
        self._checked = True
        try:
            consts = self._jax.make_jaxpr(self.raw_cost)(M).consts
        except Exception:  # noqa: BLE001 - untraceable costs are reported by _call
            return
        low = sorted({str(c.dtype) for c in consts if hasattr(c, "dtype")
                      and np.issubdtype(c.dtype, np.floating) and c.dtype.itemsize < 8})
        if low:
            warnings.warn(
                f"the cost's arrays include {', '.join(low)} ones (made before JAX's 64-bit "
                "mode was on?): its answers will be accurate to about 1e-7.  Call "
                'jax.config.update("jax_enable_x64", True) before creating them',
                UserWarning, stacklevel=5)

    def _call(self, name, *args):
        if self._is_native(args[0]):
            return self._plain[name](*args)
        args = tuple(tuple(a) if isinstance(a, list) else a for a in args)
        if not getattr(self, "_checked", False):
            self._check_precision(args[0])
        try:
            out = self._fns[name](*args)
        except self._jax.errors.JAXTypeError as exc:  # value-dependent Python control flow
            warnings.warn(f"jax.jit cannot trace this objective's {name} ({type(exc).__name__});"
                          " it runs uncompiled", UserWarning, stacklevel=4)
            self._fns[name] = self._plain[name]
            out = self._plain[name](*args)
        return float(out) if name == "cost" else _numpy(out)

    def cost(self, M):
        return self._call("cost", M)

    def egrad(self, M):
        return self._call("egrad", M)

    def ehvp(self, M, V):
        return self._call("ehvp", M, V)


class TorchDerivatives(Derivatives):
    """PyTorch's reverse-mode gradient of the cost (``torch.autograd.grad``) and its
    Hessian-vector products by differentiating that gradient once more, each traced once per
    shape and rebuilt as one small graph (:mod:`ldr.torch_graphs`: one product per symmetric
    matrix the cost closes over, no operation autodiff's bookkeeping adds for nothing), and
    checked against eager autodiff at the point it was traced at; NumPy points become
    float64 tensors on the CPU without a copy.  :meth:`ehvp_at` computes a product's
    point-only part once per point (:func:`ldr.torch_graphs.split`).

    A cost that cannot be traced on fake tensors (Python control flow on values,
    ``.item()``, NumPy inside) runs eagerly, as do points that require a gradient.  Measured
    on the CPU (``benchmarks/bench_backends.py``): eager ``torch.func`` took several times
    as long as ``torch.autograd``, and ``torch.compile`` costs seconds to tens of seconds per
    objective before the first call, which a solve of a few hundred products does not win
    back; neither is used.
    """

    def __init__(self, backend, cost, egrad=None, ehvp=None, device=None):
        super().__init__(backend, cost, egrad, ehvp, device)
        import torch

        self._torch = torch
        self._device = None if device is None else torch.device(device)
        if self._device is not None and self._device.type == "cpu":
            self._device = None
        self._graphs: dict = {}

    def _tensor(self, M):
        if isinstance(M, (tuple, list)):
            return tuple(self._tensor(m) for m in M)
        if isinstance(M, self._torch.Tensor):
            return M
        M = np.asarray(M, dtype=float)
        if not M.flags.writeable or any(s < 0 for s in M.strides):  # from_numpy's limits;
            M = np.array(M, order="C")  # any positive strides (Fortran order) are shared
        T = self._torch.from_numpy(M)
        return T if self._device is None else T.to(self._device)

    def _leaves(self, M):
        """``M`` detached, requiring a gradient (a tuple on a product)."""
        if isinstance(M, tuple):
            return tuple(m.detach().requires_grad_(True) for m in M)
        return M.detach().requires_grad_(True)

    def _grad(self, M, create_graph=False):
        """``(leaves, gradient)`` of the cost at tensor(s) ``M``."""
        torch = self._torch
        with torch.enable_grad():
            X = self._leaves(M)
            if self.raw_egrad is not None:
                return X, self.raw_egrad(X)
            inputs = X if isinstance(X, tuple) else (X,)
            G = torch.autograd.grad(self.raw_cost(X), inputs, create_graph=create_graph,
                                    allow_unused=True)
            G = tuple(torch.zeros_like(x) if g is None else g for g, x in zip(G, inputs))
            return X, (G if isinstance(X, tuple) else G[0])

    def _hvp_from(self, X, G, V):
        """H V from the gradient ``G`` with its graph at leaves ``X``."""
        torch = self._torch
        inputs = X if isinstance(X, tuple) else (X,)
        outs = G if isinstance(G, tuple) else (G,)
        vs = V if isinstance(V, tuple) else (V,)
        HV = torch.autograd.grad(outs, inputs, vs, retain_graph=True, allow_unused=True)
        HV = tuple(torch.zeros_like(x) if h is None else h for h, x in zip(HV, inputs))
        return HV if isinstance(X, tuple) else HV[0]

    def _eager(self, name: str, product: bool):
        """The flat eager function that :meth:`_graph` traces: tensors in, a tuple out."""
        def flat(*args):
            k = len(args) // 2 if name == "ehvp" else len(args)
            M = tuple(args[:k]) if product else args[0]
            if name == "egrad":
                G = self._grad(M)[1]
            else:
                V = tuple(args[k:]) if product else args[k]
                X, G = self._grad(M, create_graph=True)
                G = self._hvp_from(X, G, V)
            return tuple(G) if product else (G,)
        return flat

    def _graph(self, name: str, args: tuple, product: bool):
        """The simplified graph of ``name`` ("egrad" or "ehvp") for inputs shaped as
        ``args``, built and checked on first use; None where the cost runs eagerly."""
        key = (name, product) + tuple((a.shape, a.dtype, a.device) for a in args)
        if key not in self._graphs:
            self._graphs[key] = self._build(self._eager(name, product), args)
        return self._graphs[key]

    def _build(self, eager, args):
        from ldr.torch_graphs import simplified

        args = tuple(a.clone() for a in args)  # distinct tensors: the same one twice (M, M)
        try:                                     # would be traced as one input
            graph = simplified(eager, *args)
            got = graph(*args)
        except Exception:  # noqa: BLE001 - untraceable on fake tensors: run eagerly
            return None
        want = eager(*args)
        torch = self._torch
        for g, w in zip(got, want):  # the rebuilt graph against autodiff, at this point
            tol = max(1e-8, 1e3 * graph.ldr_eps)  # float32 inside: merged products round
            scale = max(float(torch.linalg.vector_norm(w)), float(torch.linalg.vector_norm(g)))
            if not float(torch.linalg.vector_norm(g - w)) <= tol * scale:
                warnings.warn("ldr.torch_graphs' rebuilt derivative differs from autodiff's "
                              "here (please report it); this objective runs eagerly",
                              UserWarning, stacklevel=6)
                return None
        return graph

    def _fast(self, name, M, V=None):
        """``name`` by the simplified graph, or None (eager) where there is none."""
        product = isinstance(M, tuple)
        args = (M if product else (M,)) + (() if V is None else (V if product else (V,)))
        if any(a.requires_grad for a in args):
            return None
        graph = self._graph(name, args, product)
        if graph is None:
            return None
        out = graph.forward(*args)  # no input requires a gradient: nothing is recorded;
        # forward, not __call__: nn.Module's hooks machinery costs ~5% of a 500×10 product
        return tuple(out) if product else out[0]

    def _out(self, value):
        if isinstance(value, (tuple, list)):
            return tuple(self._out(v) for v in value)
        if isinstance(value, self._torch.Tensor):
            return value.detach().cpu().numpy()
        return _numpy(value)

    def _native(self, M) -> bool:
        first = M[0] if isinstance(M, (tuple, list)) else M
        return isinstance(first, self._torch.Tensor)

    def cost(self, M):
        if self._native(M):
            return self.raw_cost(M)
        with self._torch.no_grad():
            return float(self.raw_cost(self._tensor(M)))

    def egrad(self, M):
        native = self._native(M)
        T = _tuple(M) if native else self._tensor(M)
        if self.raw_egrad is not None:
            G = self.raw_egrad(T)
        else:
            G = self._fast("egrad", T)
            G = self._grad(T)[1] if G is None else G
        return G if native else self._out(G)

    def ehvp(self, M, V):
        native = self._native(M)
        T, W = (_tuple(M), _tuple(V)) if native else (self._tensor(M), self._tensor(V))
        if self.raw_ehvp is not None:
            HV = self.raw_ehvp(T, W)
        else:
            HV = self._fast("ehvp", T, W)
            if HV is None:
                X, G = self._grad(T, create_graph=True)
                HV = self._hvp_from(X, G, W)
        return HV if native else self._out(HV)

    def ehvp_at(self, M):
        if self.raw_ehvp is not None or self._native(M):
            return super().ehvp_at(M)
        T = self._tensor(M)
        product = isinstance(T, tuple)
        ms = T if product else (T,)
        graph = self._graph("ehvp", ms + ms, product)
        if graph is None:
            X, G = self._grad(T, create_graph=True)  # the graph, once per point
            return lambda V: self._out(self._hvp_from(X, G, self._tensor(V)))
        if not hasattr(graph, "ldr_split"):
            from ldr.torch_graphs import split

            graph.ldr_split = split(graph, len(ms))
        front, apply = graph.ldr_split
        fixed = front(*ms)  # NumPy points: no input requires a gradient

        def product_at(V):
            W = self._tensor(V)
            out = apply.forward(*(W if product else (W,)), *fixed)
            return self._out(tuple(out) if product else out[0])
        return product_at


def derivatives(backend: str, cost: Callable, egrad: Callable | None = None,
                ehvp: Callable | None = None, device=None) -> Derivatives:
    """The :class:`Derivatives` of ``cost`` in ``backend`` ("jax" or "torch"); ``device``
    (PyTorch only: "cuda", "cuda:1", a ``torch.device``) is where the cost's tensors live and
    the points are sent (None: the CPU)."""
    validate(backend)
    if device is not None and backend != "torch":
        raise ParameterError("device", f"only backend='torch' places the points on a device; "
                                       f"got device={device!r} with backend={backend!r} (JAX "
                                       "computes on its default device)")
    if backend == "jax":
        return JaxDerivatives(backend, cost, egrad, ehvp)
    if backend == "torch":
        return TorchDerivatives(backend, cost, egrad, ehvp, device)
    raise ParameterError("backend", f"{backend!r} converts no arrays: only 'jax' and 'torch' "
                                    "have Derivatives")
