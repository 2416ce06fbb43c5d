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
"torch"       PyTorch (``torch.*`` functions and tensor methods)    ``torch.func.grad``;
                                                                    ``torch.func.jvp`` of it
"numpy"       anything: nothing is differentiated                   hand-written only
============  ====================================================  ========================

With ``"jax"`` and ``"torch"`` the cost (and a hand-written ``egrad``/``ehvp``) receives the
backend's arrays — ``jax.Array`` / ``torch.Tensor`` of float64, a tuple of them on a product
manifold — and the objective's ``cost(M)`` called with NumPy arrays returns a Python float,
so solvers, :func:`ldr.check`, certificates and estimators see what they see for autograd.
JAX computes in float32 unless 64-bit mode is on: the JAX backend turns it on
(``jax.config.update("jax_enable_x64", True)``, as pymanopt does) when its first objective
is made, so create the cost's arrays after that (or enable it yourself first).  Costs whose
Python control flow depends on values cannot be traced by ``jax.jit``; they run uncompiled
(a :class:`UserWarning` says so).  ``torch.compile`` is not applied: on the CPU it made no
oracle faster than ``torch.func`` in eager mode and costs seconds per shape
(``benchmarks/bench_backends.py``).

JAX and PyTorch are optional (``pip install "ldr-manifold[jax]"``, ``"ldr-manifold[torch]"``)
and imported only when an objective asks for them; ``import ldr`` imports neither.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable

import numpy as np

from ldr.errors import ParameterError

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


class Derivatives:
    """An objective's cost, gradient and Hessian-vector product in one backend, built once
    per objective (:meth:`ldr.Objective.derivatives`) from its raw ``cost`` (written for the
    backend) and any hand-written ``egrad``/``ehvp`` (also written for it).  Called with NumPy
    arrays, each returns NumPy (``cost``: a float); called with the backend's arrays, the
    backend's."""

    def __init__(self, backend: str, cost: Callable, egrad: Callable | None = None,
                 ehvp: Callable | None = None):
        self.backend, self.raw_cost = backend, cost
        self.raw_egrad, self.raw_ehvp = egrad, ehvp

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
    each compiled once by ``jax.jit`` (retraced only for a new shape)."""

    def __init__(self, backend, cost, egrad=None, ehvp=None):
        super().__init__(backend, cost, egrad, ehvp)
        import jax

        jax.config.update("jax_enable_x64", True)
        self._jax = jax
        grad = egrad if egrad is not None else jax.grad(cost)

        def hvp(M, V):
            return jax.jvp(grad, (M,), (V,))[1]

        self._plain = {"cost": cost, "egrad": grad, "ehvp": ehvp if ehvp is not None else hvp}
        self._fns = {name: jax.jit(fn) for name, fn in self._plain.items()}

    def _is_native(self, M) -> bool:
        first = M[0] if isinstance(M, (tuple, list)) else M
        return isinstance(first, self._jax.Array)  # tracers are jax.Arrays too

    def _call(self, name, *args):
        if self._is_native(args[0]):
            return self._plain[name](*args)
        args = tuple(tuple(a) if isinstance(a, list) else a for a in args)
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
    """``torch.func.grad`` of the cost, and ``torch.func.jvp`` of that gradient (forward over
    reverse); NumPy points become float64 tensors on the CPU without a copy."""

    def __init__(self, backend, cost, egrad=None, ehvp=None):
        super().__init__(backend, cost, egrad, ehvp)
        import torch
        import torch.func

        self._torch = torch
        grad = egrad if egrad is not None else torch.func.grad(cost)

        def hvp(M, V):
            return torch.func.jvp(grad, (M,), (V,))[1]

        self._fns = {"cost": cost, "egrad": grad, "ehvp": ehvp if ehvp is not None else hvp}

    def _tensor(self, M):
        if isinstance(M, (tuple, list)):
            return tuple(self._tensor(m) for m in M)
        if isinstance(M, self._torch.Tensor):
            return M
        M = np.asarray(M, dtype=float)
        if not (M.flags.writeable and M.flags.c_contiguous):
            M = np.ascontiguousarray(M).copy()
        return self._torch.from_numpy(M)

    def _call(self, name, *args):
        first = args[0][0] if isinstance(args[0], (tuple, list)) else args[0]
        if isinstance(first, self._torch.Tensor):
            return self._fns[name](*args)
        out = self._fns[name](*(self._tensor(a) for a in args))
        if name == "cost":
            return float(out)
        if isinstance(out, (tuple, list)):
            return tuple(o.detach().numpy() if isinstance(o, self._torch.Tensor) else
                         _numpy(o) for o in out)
        return out.detach().numpy() if isinstance(out, self._torch.Tensor) else _numpy(out)

    def cost(self, M):
        return self._call("cost", M)

    def egrad(self, M):
        return self._call("egrad", M)

    def ehvp(self, M, V):
        return self._call("ehvp", M, V)


def derivatives(backend: str, cost: Callable, egrad: Callable | None = None,
                ehvp: Callable | None = None) -> Derivatives:
    """The :class:`Derivatives` of ``cost`` in ``backend`` ("jax" or "torch")."""
    validate(backend)
    if backend == "jax":
        return JaxDerivatives(backend, cost, egrad, ehvp)
    if backend == "torch":
        return TorchDerivatives(backend, cost, egrad, ehvp)
    raise ParameterError("backend", f"{backend!r} converts no arrays: only 'jax' and 'torch' "
                                    "have Derivatives")
