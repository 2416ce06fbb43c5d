"""A Problem binds an Objective to its manifold geometry, counts oracle calls and checks what
the oracles return.

Solvers see only a Problem, so every solver pays for the same oracle calls, and the counts
(``n_cost``, ``n_grad``, ``n_hvp``, ``n_phi``, ``n_pencil``) go into the Result for a fair
comparison.

Oracles are checked at the door: every gradient, Hessian-vector product, Φ and pencil must
have the shape of the point (d×r, a tuple of them on a product; d×d for Φ and the pencil) and
finite entries, else an :class:`OracleError` names the oracle and what was wrong — a
(d, 1) gradient for a (d, r) point is never broadcast.  A wrong shape is always raised;
non-finite values are raised at the start and end the run (not converged) past it.  The
checks cost O(size of the answer), far below the oracle itself.  Costs are not checked
here: a non-finite cost at a trial point is a rejected trial for the solver, and the driver
stops a run whose iterate has one.

A declared ``shape`` that does not fit the cost (``ldr.objective(cost, shape=(12, 2))`` for
a cost that multiplies M by a 13×13 matrix) surfaces as NumPy's matmul or broadcasting
error from deep inside autograd.  Until the first cost or gradient has been evaluated, such
an error is re-raised as a ``ParameterError`` that names ``shape`` (the
NumPy error chained to it).

**Deadline.**  ``Problem.deadline`` (a ``time.perf_counter()`` value; infinite unless the
driver or :func:`ldr.certificate` sets one from a time budget) is checked before every oracle
call: a call is not started when the time left is less than the last call of the same oracle
took (or, for its first call, the slowest oracle call so far), and
:class:`~ldr.core.errors.BudgetExceeded` is raised instead.  So a budget holds to within one oracle
call's time misjudged, not one solver step's (a trust-region step at large n makes many
Hessian-vector products), and an objective is never interrupted inside a call.  The
durations are remembered per objective, shared by every Problem built on the same
objective instance: a second run (``ldr.compare`` runs one per solver and start, each with
its own Problem) judges even its first call by what that oracle took before, instead of
starting a call it has no time for.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import time
import weakref
from collections import Counter

import numpy as np

from ldr.core.backends import validate as validate_backend
from ldr.core.errors import BudgetExceeded, ParameterError
from ldr.core.objective import Objective
from ldr.data import arrays
from ldr.manifolds import Manifold, Product, from_declaration
from ldr.manifolds.orthonormal import OrthonormalColumns

#: the last call's duration per oracle, per objective instance (module docstring, Deadline)
_DURATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


#: the reference point's (gradient norm, cost) of :meth:`Problem.gradient_scale` per objective,
#: kept only inside :func:`sharing_reference` (an objective changed in place would change it)
_REFERENCE_NORMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def sharing_reference(objective):
    """Within the block, every Problem over ``objective`` reuses the gradient norm at the
    reference point of :meth:`Problem.gradient_scale`, computed by the first that needs it:
    the point is fixed (seed 0), so the norm is the same for every run, and at large n it is
    a whole gradient evaluation per run (``ldr.compare`` runs one per solver and start)."""
    try:
        _REFERENCE_NORMS[objective] = None
    except TypeError:  # not a weak dictionary key: nothing shared
        yield
        return
    try:
        yield
    finally:
        _REFERENCE_NORMS.pop(objective, None)


def _durations(objective) -> dict[str, float]:
    """The durations dict shared by the Problems over ``objective`` (a private one where the
    objective cannot be a weak dictionary key: unhashable, or without ``__weakref__``)."""
    try:
        return _DURATIONS.setdefault(objective, {})
    except TypeError:
        return {}


class OracleError(ValueError):
    """An oracle (egrad, ehvp, phi, pencil) returned something of the wrong shape
    (``wrong_shape``: a bug in the oracle, always raised) or non-finite values (raised at the
    start; past it the driver ends the run, not converged, with this message as reason)."""

    def __init__(self, message: str, wrong_shape: bool = True):
        super().__init__(message)
        self.wrong_shape = wrong_shape


def _check_array(value, shape, what: str) -> np.ndarray:
    if type(value) is not np.ndarray and arrays.foreign(value) is not None:
        return _check_foreign(value, shape, what)
    arr = np.asarray(value, dtype=float)
    if arr.shape != tuple(shape):
        raise OracleError(f"{what} returned an array of shape {arr.shape}; expected "
                          f"{tuple(shape)} (the shape of the point)")
    # a finite sum has finite terms (a NaN or ±inf entry makes it NaN or ±inf): one reduction
    # instead of a boolean array; only a sum that overflows is looked at entry by entry
    if not math.isfinite(np.add.reduce(arr, axis=None)) and not np.isfinite(arr).all():
        bad = "NaN" if np.isnan(arr).any() else "infinite"
        raise OracleError(f"{what} returned {bad} entries", wrong_shape=False)
    return arr


def _check_foreign(value, shape, what: str):
    """:func:`_check_array` for an array of another namespace (PyTorch, CuPy, ...): kept in
    its namespace, on its device and in its float dtype; the finiteness test is one scalar."""
    if tuple(value.shape) != tuple(shape):
        raise OracleError(f"{what} returned an array of shape {tuple(value.shape)}; expected "
                          f"{tuple(shape)} (the shape of the point)")
    if not arrays.all_finite(value):
        bad = "NaN" if arrays.any_nan(value) else "infinite"
        raise OracleError(f"{what} returned {bad} entries", wrong_shape=False)
    return value


def template_of(objective, M0=None):
    """An array of the namespace, device and float dtype a problem computes in, or None for
    NumPy: the first array of another namespace among the objective's attributes (PCA's
    covariance as a PyTorch tensor), else ``M0`` when it is one and the objective's backend
    is not autograd (which differentiates NumPy only)."""
    for value in vars(objective).values():
        if type(value) is not np.ndarray and arrays.foreign(value) is not None:
            return value
    first = M0[0] if isinstance(M0, (tuple, list)) and M0 else M0
    if (type(first) is not np.ndarray and objective.backend != "autograd"
            and arrays.foreign(first) is not None):
        return first
    return None


#: NumPy's messages for operands whose shapes do not fit (matmul, dot, broadcasting)
_SHAPE_ERROR = re.compile(r"core dimension|not aligned|could not be broadcast|shapes? .*"
                          r"(mismatch|incompatible)|size \d+ is different from \d+")


def _shape_error(exc: ValueError, name: str, shape) -> ParameterError | None:
    """The ParameterError about ``shape`` that a NumPy shape error at the first evaluation
    means, or None for any other error."""
    message = str(exc)
    if not _SHAPE_ERROR.search(message):
        return None
    d = shape[0] if shape and not isinstance(shape[0], (tuple, list)) else None
    sizes = {int(v) for v in re.findall(r"\b(\d+)\b", " ".join(
        re.findall(r"size \d+ is different from \d+|\d+ \(dim \d\) != \d+", message)))}
    hint = ""
    if d is not None and len(sizes - {d}) == 1:
        hint = f" (it meets a dimension of {(sizes - {d}).pop()} where M has {d} rows)"
    return ParameterError("shape",
        f"{tuple(shape)} does not match what the cost of {name} multiplies M by{hint}: "
        f"evaluating it at a point of that shape failed with NumPy's error ({message}). "
        "Declare shape=(d, r) with d the number of rows of M the cost's matrices act on "
        "(for a cost built on data X, usually X.shape[1], the number of features) and r "
        "the number of columns")


@functools.lru_cache(maxsize=64)
def _reference_point_cached(manifold: Manifold):
    point = manifold.random_point(np.random.default_rng(0))
    for p in manifold.split(point):
        p.setflags(write=False)
    return point


def _reference_point(manifold: Manifold):
    """The fixed point of :meth:`Problem.gradient_scale` (seed 0), drawn once per manifold (a
    fresh copy each time, so an oracle that writes into its argument harms nothing)."""
    point = _reference_point_cached(manifold)
    return tuple(p.copy() for p in point) if isinstance(point, tuple) else point.copy()


class Problem:
    """An objective on its manifold, with evaluation counters and checked oracles."""

    def __init__(self, objective: Objective):
        if not isinstance(objective, Objective):
            raise ParameterError("objective",
                f"expected an ldr.Objective, got {type(objective).__name__}; "
                "wrap a cost function with ldr.objective(cost, shape=(d, r))"
            )
        if objective.shape is None and not isinstance(objective.manifold, Manifold):
            raise ParameterError("objective",
                f"{type(objective).__name__} has no shape; set self.shape = (d, r)"
            )
        if objective.backend != "autograd":  # set on an instance, never checked before
            validate_backend(objective.backend)
        self.objective = objective
        #: the :class:`~ldr.manifolds.Manifold` the objective declares
        self.manifold = from_declaration(objective.manifold, objective.shape)
        self.counts: Counter = Counter()
        self._name = type(objective).__name__
        self._evaluated = False  # until the first cost or gradient: shape errors name shape
        #: ``time.perf_counter()`` after which no oracle call starts (module docstring)
        self.deadline = math.inf
        # the last call's duration, per oracle; shared with every Problem over this objective
        self._seconds: dict[str, float] = _durations(objective)
        #: an array of the namespace, device and dtype the iterates live in; None: NumPy
        #: (:func:`template_of`; the driver sets it from M0 where the objective has none)
        self.template = template_of(objective)

    def _first(self, oracle, *args):
        """``oracle(*args)``, with a NumPy shape error at the first evaluation re-raised as a
        ParameterError about ``shape`` (module docstring)."""
        try:
            out = oracle(*args)
        except ValueError as exc:
            better = _shape_error(exc, self._name, self.manifold.shape)
            if better is None:
                raise
            raise better from exc
        self._evaluated = True
        return out

    def _timed(self, kind: str, call, *args):
        """``call(*args)``, unless it would overrun :attr:`deadline` (module docstring)."""
        now = time.perf_counter()
        if self.deadline < math.inf:
            expected = self._seconds.get(kind)
            if expected is None:
                expected = max(self._seconds.values(), default=0.0)
        if self.deadline < math.inf and now + expected > self.deadline:
            left = max(self.deadline - now, 0.0)
            raise BudgetExceeded(
                f"the time budget ran out: {left:.3g} s were left, less than the "
                f"{expected:.3g} s that a call of {self._name}.{kind} takes")
        out = call(*args) if self._evaluated else self._first(call, *args)
        self._seconds[kind] = time.perf_counter() - now
        return out

    def _tangent_like(self, value, what: str):
        geom = self.manifold
        if isinstance(geom, Product):
            if not isinstance(value, (tuple, list)) or len(value) != len(geom.shape):
                raise OracleError(f"{self._name}.{what} returned {type(value).__name__}; "
                                  f"expected a tuple of {len(geom.shape)} arrays (one per "
                                  "factor of the product manifold)")
            return tuple(_check_array(v, shape, f"{self._name}.{what}[{i}]")
                         for i, (v, shape) in enumerate(zip(value, geom.shape)))
        return _check_array(value, geom.shape, f"{self._name}.{what}")

    def cost(self, M) -> float:
        self.counts["cost"] += 1
        value = self._timed("cost", self.objective.cost, M)
        if isinstance(value, float):  # a Python float or np.float64: nothing to check
            return float(value)
        if arrays.foreign(value) is not None:  # a 0-d tensor: one scalar to the host
            if math.prod(value.shape) != 1:
                raise OracleError(f"{self._name}.cost returned an array of shape "
                                  f"{tuple(value.shape)}; expected a scalar")
            return float(arrays.namespace(value).reshape(value, ()))
        value = np.asarray(value, dtype=float)
        if value.size != 1:
            raise OracleError(f"{self._name}.cost returned an array of shape {value.shape}; "
                              "expected a scalar")
        return float(value.reshape(()))

    def egrad(self, M):
        self.counts["grad"] += 1
        return self._tangent_like(self._timed("egrad", self.objective.egrad, M), "egrad")

    def ehvp(self, M, V):
        self.counts["hvp"] += 1
        return self._tangent_like(self._timed("ehvp", self.objective.ehvp, M, V), "ehvp")

    def batch(self, M, indices) -> tuple[float, object]:
        """The objective's ``batch(M, indices)`` (a sum of terms and of their gradients,
        :class:`~ldr.core.objective.Objective`), counted (``batch`` calls, ``terms`` summed), timed
        against the deadline and checked as ``egrad`` is."""
        self.counts["batch"] += 1
        self.counts["terms"] += len(indices)
        out = self._timed("batch", self.objective.batch, M, indices)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise OracleError(f"{self._name}.batch returned {type(out).__name__}; expected "
                              "a pair (cost, egrad)")
        cost = np.asarray(out[0], dtype=float)
        if cost.size != 1:
            raise OracleError(f"{self._name}.batch returned a cost of shape {cost.shape}; "
                              "expected a scalar")
        return float(cost.reshape(())), self._tangent_like(out[1], "batch")

    def phi(self, M) -> np.ndarray:
        self.counts["phi"] += 1
        d = self.manifold.shape[-2]
        return _check_array(self._timed("phi", self.objective.phi, M), (d, d),
                            f"{self._name}.phi")

    def pencil(self, M) -> tuple[np.ndarray, np.ndarray]:
        self.counts["pencil"] += 1
        out = self._timed("pencil", self.objective.pencil, M)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise OracleError(f"{self._name}.pencil returned {type(out).__name__}; expected "
                              "a pair (A, B)")
        d = self.manifold.shape[-2]
        return (_check_array(out[0], (d, d), f"{self._name}.pencil A"),
                _check_array(out[1], (d, d), f"{self._name}.pencil B"))

    def rgrad(self, M, G):
        return self.manifold.rgrad(M, G)

    def rhess(self, M, G, V):
        """Riemannian Hessian of the cost at ``M`` along tangent ``V`` (G = egrad(M))."""
        return self.manifold.rhess(M, G, self.ehvp(M, V), V)

    def hess_operator(self, M, G):
        """``V ↦`` the Riemannian Hessian at ``M`` along ``V`` (G = egrad(M)), for the many
        products of one inner solve: what does not depend on V — the manifold's part of the
        conversion (:meth:`~ldr.manifolds.Manifold.hess_shift`) and, for an autograd Hessian,
        the trace of the gradient (:meth:`~ldr.Objective.ehvp_at`) — is done once.
        Each product is counted and checked as ``ehvp`` is."""
        geom = self.manifold
        ehvp = self.objective.ehvp_at(M)
        S = geom.hess_shift(M, G)

        def hess(V):
            self.counts["hvp"] += 1
            return geom.rhess(M, G, self._tangent_like(self._timed("ehvp", ehvp, V), "ehvp"),
                              V, S)

        return hess

    def seconds(self, *kinds: str) -> float:
        """The time the oracles ``kinds`` ("cost", "egrad", "ehvp", "phi", "pencil", "batch")
        took at their last call, summed (0 for one never called on this objective)."""
        return float(sum(self._seconds.get(kind, 0.0) for kind in kinds))

    def provides(self, member: str) -> bool:
        return self.objective.provides(member)

    def gradient_scale(self, grad_norm: float | None = None, rgrad=None,
                       start: tuple | None = None) -> float:
        """The problem's typical Riemannian gradient norm, which relative gradient tolerances
        multiply: the largest of the gradient norm at a fixed reference point R (a random
        point drawn from seed 0, so the scale does not depend on the user's seed),
        ``grad_norm`` (the start's, when known) and, with ``start = (M₀, f(M₀))`` on a
        manifold of orthonormal frames (Stiefel and Grassmann factors only: compact, of
        diameter O(√r)), the mean slope between them, the absolute cost difference over
        dist(R, M₀) — by the mean value theorem a lower bound on the largest gradient norm
        along the geodesic, which keeps the scale from being a flat corner's where R lies on
        a plateau of the cost (features of very different scales: the reference gradient can
        be 10⁶ times smaller than the cost's variation, and tol · scale then asks for a
        gradient below rounding).  Multiplying the data by c multiplies a cost of degree k
        in the data, and this scale, by c^k: a rule ‖grad f‖ ≤ gtol · scale stops at the same
        iterate whatever the data's units; adding a constant to the cost changes nothing.
        Never 0 (1e-300 at the least).  ``rgrad``, a
        callable M ↦ Riemannian gradient, replaces the exact one at the reference point (a
        stochastic solver's estimate, where a full gradient is what the run avoids; then no
        slope is taken, which would need the full cost at R)."""
        geom = self.manifold
        norms = [] if grad_norm is None else [grad_norm]
        try:
            shared = rgrad is None and self.objective in _REFERENCE_NORMS
        except TypeError:
            shared = False
        slope = (start is not None and rgrad is None
                 and all(isinstance(f, OrthonormalColumns) for f in geom.factors))
        cached = _REFERENCE_NORMS.get(self.objective) if shared else None
        if cached is None or (slope and cached[1] is None):
            # an estimate (rgrad) is never shared: it is the run's own
            R = _reference_point(geom)
            if self.template is not None:
                R = arrays.like(R, self.template)
            try:
                reference = (float(geom.norm(self.rgrad(R, self.egrad(R)) if rgrad is None
                                             else rgrad(R))) if cached is None else cached[0])
            except OracleError:  # the reference point may lie outside the cost's domain
                reference = math.nan
            cost = None
            if slope:
                try:  # a cost that refuses the reference point (an objective's own check of
                    cost = float(self.cost(R))  # its data there) leaves the slope out
                except (OracleError, ValueError, ArithmeticError):
                    cost = math.nan
            cached = (reference, cost)
            if shared:
                _REFERENCE_NORMS[self.objective] = cached
        norms.append(cached[0])
        if slope and cached[1] is not None and np.isfinite(cached[1]):
            M0, f0 = start
            R = _reference_point(geom)
            try:
                distance = float(geom.dist(R, arrays.to_host(M0) if not isinstance(M0, tuple)
                                           else tuple(arrays.to_host(m) for m in M0)))
            except NotImplementedError:  # Stiefel's: the chordal distance (≤ the geodesic)
                distance = float(np.linalg.norm(np.concatenate(
                    [np.ravel(a) - np.ravel(arrays.to_host(b))
                     for a, b in zip(geom.split(R), geom.split(M0))])))
            if distance > 0 and np.isfinite(f0):
                norms.append(abs(cached[1] - float(f0)) / distance)
        finite = [g for g in norms if np.isfinite(g)]
        return max(finite + [1e-300])
