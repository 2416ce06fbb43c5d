"""The Objective: a cost of an orthonormal d×r matrix M, and its optional oracles.

A new method takes a few lines::

    import autograd.numpy as anp
    import ldr

    class SparsePCA(ldr.Objective):
        def __init__(self, C, r, lam):
            self.C, self.lam = C, lam
            self.shape, self.manifold = (C.shape[0], r), "stiefel"

        def cost(self, M):
            return -anp.trace(M.T @ self.C @ M) + self.lam * anp.sum(anp.sqrt(M**2 + 1e-8))

or, for a plain function, ``ldr.objective(cost, shape=(d, r))``.  ``egrad`` and ``ehvp`` then
come from autograd; a subclass that defines them by hand is used as written.  A cost written
with JAX or PyTorch says so: ``backend = "jax"`` in the class body (a class attribute: it is
read when the class is made), ``ldr.objective(cost, shape=(d, r), backend="torch")``
(:mod:`ldr.core.backends`).

Members (the design page's table):

``manifold``
    "stiefel", "grassmann" (cost invariant to M → MR), "euclidean" or a tuple (product);
    or an :class:`ldr.manifolds.Manifold` (:func:`ldr.manifolds.from_declaration`)
``shape``
    (d, r), or a tuple of them on a product (may be None for a Manifold)
``backend``
    where egrad and ehvp come from: "autograd" (default), "jax", "torch" or "numpy"
    (hand-written only); :mod:`ldr.core.backends`
``cost(M)``
    scalar to minimize
``egrad(M)``
    Euclidean gradient (default: the backend's)
``ehvp(M, V)``
    Euclidean Hessian-vector product (default: the backend's)
``phi(M)``
    Φ-oracle: symmetric d×d with ``egrad(M) == 2 Φ(M) M``
``phi0()``
    Φ at the second-order Taylor point (ISM's spectral start)
``pencil(M)``
    SCF oracle ``(A, B)``: the subspace is spanned by the top-r generalized
    eigenvectors of (A, B), B positive definite
``pencil0()``
    the pencil at the uninformative point (SCF's own start, as Φ₀ is ISM's)
``coarse_problem()``
    an easier problem of the same shape (or None) whose answer starts this
    one: the driver solves it first and takes the solver's own start there
    (continuation; WDA: reg × 10)
``heuristic()``
    the classical eigenvector answer
``horizontal(M, V)``
    the part of a tangent vector orthogonal to the orbit of a symmetry of the
    cost (a quotient the manifold does not know of); the trust-region inner solve
    keeps to it (orthogonal CCA: one rotation of both factors)
``preconditioner_at(M)``
    ``V ↦ P⁻¹V``, P a positive-definite approximation of the Hessian at M;
    the trust-region inner solve preconditions with it (undercomplete ICA)
``transform(X, M)``
    the method's low-dimensional mapping (default ``X @ M``)
``global_gap(M)``
    an upper bound on the relative suboptimality ``(f(M) − f*)/|f*|``, 0 exactly at
    a global minimizer, where theory gives one (:func:`ldr.certificate`)
``default_solver``
    the solver :func:`ldr.solve` uses when none is given (None: the driver's
    rule — ISM then trust region with a Φ-oracle, else trust region)
``n_terms``, ``batch(M, indices)``
    a cost that is a sum f = Σ_i f_i over ``n_terms`` terms
    (samples, pairs), for the stochastic solvers ("sgd", "adam", "svrg"):
    ``batch`` returns ``(Σ_{i∈I} f_i(M), Σ_{i∈I} ∇f_i(M))`` for the integer array
    I = ``indices`` (module docstring, *Sums of terms*)
``method``
    a :class:`Method`: the declaration that makes a method built from data
    reachable by name from the command line, ``LinearDR`` and the docs
    (:mod:`ldr.driver.registry`); None for objectives that are not such a method

**Sums of terms** (the stochastic solvers' protocol).  A cost that is a sum

    f(M) = Σ_{i < n_terms} f_i(M)                                                    (S1)

over samples or pairs declares ``n_terms`` (an int; None, the default, says it is not such a
sum or its terms are not at hand) and defines ``batch(M, indices) -> (cost, egrad)``, the sum
of the terms i ∈ I and of their Euclidean gradients for an integer array I (no repeats).
Nothing else is asked: a solver scales a batch by ``n_terms / len(I)`` for an unbiased
estimate of (f, ∇f), and the sum over a partition of ``range(n_terms)`` is the full cost and
gradient (the tests check that identity to rounding).  The order of the terms is the
objective's (NCA: its rows sorted by class).  Defined by :class:`~ldr.objectives.PCA` (rows,
when built from an in-memory array) and :class:`~ldr.objectives.NCA` (samples).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import autograd
import numpy as np

from ldr.core import backends
from ldr.core.errors import ParameterError

OPTIONAL = ("phi", "phi0", "pencil", "pencil0", "heuristic", "global_gap", "coarse_problem")


@dataclass(frozen=True)
class Method:
    """What an objective declares to be reachable by name (:mod:`ldr.driver.registry`): from the
    command line (``ldr compare --method NAME``), from ``LinearDR("NAME")`` and in the docs'
    method table.  Declared in the class body, ``method = Method("lda", "orthogonal LDA")``;
    a subclass does not inherit it.

    Attributes
    ----------
    name : str
        The command-line name and registry key (lower case).
    summary : str
        One line for ``ldr compare --help`` and the docs.
    supervised : bool
        Built from rows and labels, ``(X, y, r)``; else from rows alone, ``(X, r)``.
    build : str or None
        The classmethod that builds it from ``(X, [y,] r, **options)``; None: the constructor.
    options : mapping
        Command-line option → keyword of ``build`` (``{"reg": "reg"}``; RRR's ``--reg`` is its
        ``alpha``).  An objective's :class:`~ldr.core.errors.ParameterError` about that keyword is
        reported under the option's name.
    preset : mapping
        Keyword arguments the command line fixes (LPP's 10-nearest-neighbour graph).
    labels : {None, "onehot", "indicators"}
        How the command line turns class labels into ``y``: as they are; the one-hot matrix
        (C columns: a regression onto the classes); or the indicators of all classes but the
        last (C − 1 columns, of full rank: a second view whose covariance is inverted, CCA).
    chunks : mapping or None
        Keywords of :func:`ldr.data.rows.moments` (``lag``, ``diff``) when the objective reads
        its rows in one pass over chunks (a Dask array, a memmap, an iterator of chunks);
        None when it needs all rows in memory.
    memory : callable or None
        ``memory(n, class_sizes)``: the peak bytes its oracles (cost, gradient,
        Hessian-vector product) hold at ``n`` rows, beyond the data themselves (its n×n
        arrays: distances, kernels, transport plans); ``class_sizes`` is the rows per class
        of a supervised method, else None.  Measured with ``tracemalloc`` (an upper bound,
        checked against a measurement by ``tests/test_budgets.py``); the command line
        refuses a table whose estimate exceeds ``--memory-limit``.  None: no more than
        O(n·d) (or the method reads its rows in chunks).
    """

    name: str
    summary: str
    supervised: bool = False
    build: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    preset: Mapping[str, object] = field(default_factory=dict)
    labels: str | None = None
    chunks: Mapping[str, object] | None = None
    memory: Callable[[int, Sequence[int] | None], float] | None = None

    def __post_init__(self):
        for name in ("options", "preset", "chunks"):  # frozen all the way down
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, MappingProxyType(dict(value)))
        if self.labels not in (None, "onehot", "indicators"):
            raise ValueError(f"labels: expected None, 'onehot' or 'indicators', got "
                             f"{self.labels!r}")

    @property
    def chunked(self) -> bool:
        """Whether the objective reads its rows in one pass over chunks."""
        return self.chunks is not None


def declared_method(cls: type) -> Method | None:
    """The :class:`Method` that ``cls`` itself declares (not one inherited), or None."""
    return cls.__dict__.get("method") if isinstance(cls, type) else None


def _inner(a, b):
    """⟨a, b⟩ for arrays or tuples of arrays, written so autograd can trace it."""
    if isinstance(b, (tuple, list)):  # b is concrete; a may be an autograd SequenceBox
        return sum(_inner(a[i], b[i]) for i in range(len(b)))
    import autograd.numpy as anp

    return anp.sum(a * b)


def _native(backend: str, name: str, raw: Callable) -> Callable:
    """The method that replaces a jax/torch subclass's own ``cost``/``egrad``/``ehvp``: NumPy
    arguments are converted for ``raw`` (the method as written) and its answer converted
    back (:class:`ldr.core.backends.Derivatives`); the backend's arrays pass straight through."""

    def method(self, *args):
        return getattr(self.derivatives(), name)(*args)

    method.__name__ = raw.__name__
    method.__qualname__ = getattr(raw, "__qualname__", name)
    method.__doc__ = raw.__doc__
    method._ldr_raw = raw  # type: ignore[attr-defined]
    return method


class Objective:
    """Base class for a cost to minimize over a matrix manifold.

    Subclasses set ``shape`` (and ``manifold``, default ``"stiefel"``) and define ``cost``.
    Every other member is optional; see the module docstring for the contract of each.
    """

    manifold: str | tuple[str, ...] = "stiefel"
    shape: tuple = None  # type: ignore[assignment]
    name: str | None = None
    default_solver = None
    method: Method | None = None
    #: where egrad and ehvp come from (:mod:`ldr.core.backends`); a class attribute
    backend: str = "autograd"
    #: with ``backend = "torch"``: the device of the cost's tensors ("cuda"; None: the CPU)
    device = None
    #: with ``backend = "torch"``: compile the derivatives with ``torch.compile``
    #: (:mod:`ldr.core.backends`; seconds per objective, for long or repeated solves)
    compile: bool = False
    #: with ``backend = "jax"`` or ``"torch"``: one product per symmetric matrix the cost
    #: closes over in the derived gradient and Hessian-vector product
    #: (:mod:`ldr.core.symmetric_products`, :mod:`ldr.core.aten_products`)
    merge_symmetric: bool = False
    #: the number of terms of a cost that is a sum over them (module docstring, Eq. S1);
    #: None: not such a sum (the stochastic solvers refuse it)
    n_terms: int | None = None

    def __init_subclass__(cls, **kwargs):
        """Check a declared ``backend``; for "jax" and "torch", let the methods written for
        the backend's arrays (``cost``, a hand-written ``egrad``/``ehvp``) take NumPy too."""
        super().__init_subclass__(**kwargs)
        if "backend" in cls.__dict__:
            backends.validate(cls.backend)
        if cls.backend in backends.OPTIONAL:
            for name in ("cost", "egrad", "ehvp"):
                raw = cls.__dict__.get(name)
                if callable(raw) and not hasattr(raw, "_ldr_raw"):
                    setattr(cls, name, _native(cls.backend, name, raw))

    # --- required ---------------------------------------------------------------------------
    def cost(self, M) -> float:
        """The scalar cost f(M) to minimize."""
        raise NotImplementedError(f"{type(self).__name__} must define cost(M)")

    # --- derivatives (the backend's unless overridden) --------------------------------------
    def derivatives(self) -> backends.Derivatives:
        """The jax/torch :class:`~ldr.core.backends.Derivatives` of this objective, built (and
        compiled) on first use."""
        found = self.__dict__.get("_ldr_derivatives")
        if found is None:
            if self.backend not in backends.OPTIONAL:
                raise ParameterError("backend", f"{self.backend!r} has no Derivatives; only "
                                                f"{sorted(backends.OPTIONAL)} do")
            raw = {}
            for name in ("cost", "egrad", "ehvp"):
                fn = self.__dict__.get(f"_raw_{name}")  # FunctionObjective's
                if fn is None:
                    method = getattr(type(self), name)
                    if hasattr(method, "_ldr_raw"):
                        fn = method._ldr_raw.__get__(self)
                raw[name] = fn
            if raw["cost"] is None:
                raise NotImplementedError(f"{type(self).__name__} must define cost(M)")
            found = backends.derivatives(self.backend, raw["cost"], raw["egrad"], raw["ehvp"],
                                         self.device, self.compile, self.merge_symmetric)
            self._ldr_derivatives = found
        return found

    def _no_derivative(self, name: str, what: str):
        return ParameterError("backend", (
            f"{type(self).__name__} has backend='numpy', which differentiates nothing, and "
            f"defines no {name}: write {name}({what}), or name an autodiff backend "
            f"({', '.join(repr(b) for b in backends.AUTODIFF)})"))

    def egrad(self, M):
        """Euclidean gradient ∇f(M) (the backend's derivative of ``cost`` unless overridden)."""
        if self.backend != "autograd":
            if self.backend == "numpy":
                raise self._no_derivative("egrad", "M")
            return self.derivatives().egrad(M)
        if "_ag_grad" not in self.__dict__:
            self._ag_grad = autograd.grad(self.cost)
        return self._ag_grad(M)

    def ehvp(self, M, V):
        """Euclidean Hessian-vector product D∇f(M)[V] (autograd of ``cost``, twice; JAX: the
        forward derivative of the reverse gradient; PyTorch: the reverse derivative of the
        reverse gradient, :mod:`ldr.core.backends`)."""
        if self.backend != "autograd":
            if self.backend == "numpy":
                raise self._no_derivative("ehvp", "M, V")
            return self.derivatives().ehvp(M, V)
        if "_ag_grad" not in self.__dict__:
            self._ag_grad = autograd.grad(self.cost)
        grad = self._ag_grad
        return autograd.grad(lambda X: _inner(grad(X), V))(M)

    def ehvp_at(self, M):
        """``V ↦ ehvp(M, V)`` at a fixed ``M``, for the many products of one inner solve.

        With autograd's Hessian the gradient's graph is traced once at ``M``
        (``autograd.make_vjp`` of the gradient; its VJP with V is H V, H being symmetric) and
        each product is one backward pass over it (eager PyTorch's likewise, by
        ``torch.func.vjp``); a hand-written ``ehvp`` and the compiled ones (JAX's, PyTorch's
        with ``compile=True``) are called as they are."""
        if type(self).ehvp is not Objective.ehvp or "ehvp" in self.__dict__:
            return lambda V: self.ehvp(M, V)
        if self.backend != "autograd":
            return (self.derivatives().ehvp_at(M) if self.backend != "numpy"
                    else lambda V: self.ehvp(M, V))
        if "_ag_grad" not in self.__dict__:
            self._ag_grad = autograd.grad(self.cost)
        vjp, _ = autograd.make_vjp(self._ag_grad)(M)
        return vjp

    def available(self, member: str) -> bool:
        """Whether ``member`` can be evaluated: ``egrad`` and ``ehvp`` by any autodiff
        backend or by hand (a "numpy" objective), the rest when :meth:`provides` says so."""
        if member in ("egrad", "ehvp") and self.backend in backends.AUTODIFF:
            return True
        return self.provides(member)

    # --- optional oracles -------------------------------------------------------------------
    def phi(self, M) -> np.ndarray:
        """Φ-oracle: symmetric Φ(M) with egrad(M) = 2 Φ(M) M."""
        raise NotImplementedError(f"{type(self).__name__} has no Φ-oracle")

    def phi0(self) -> np.ndarray:
        """Φ at the second-order Taylor point (ISM's spectral initialization)."""
        raise NotImplementedError(f"{type(self).__name__} has no phi0")

    def pencil(self, M) -> tuple[np.ndarray, np.ndarray]:
        """SCF oracle (A(M), B(M)) with B positive definite."""
        raise NotImplementedError(f"{type(self).__name__} has no pencil")

    def pencil0(self) -> tuple[np.ndarray, np.ndarray]:
        """The pencil at the uninformative point, whose top-r generalized eigenvectors are
        SCF's own start."""
        raise NotImplementedError(f"{type(self).__name__} has no pencil0")

    def coarse_problem(self) -> Objective | None:
        """An easier problem of the same shape whose answer starts this one (continuation,
        :func:`ldr.driver.loop.initial_point`), or None."""
        raise NotImplementedError(f"{type(self).__name__} has no coarse problem")

    def heuristic(self):
        """The classical eigenvector answer (an orthonormal point)."""
        raise NotImplementedError(f"{type(self).__name__} has no heuristic")

    def horizontal(self, M, V):
        """The part of the tangent vector ``V`` at ``M`` orthogonal to the directions along
        which the cost is invariant (a symmetry's orbit through M, e.g. a rotation applied
        to every factor of a product), for a cost declared on a manifold larger than its
        quotient; the trust-region inner solve keeps to that part."""
        raise NotImplementedError(f"{type(self).__name__} declares no invariance")

    def preconditioner_at(self, M):
        """``V ↦ P⁻¹ V`` at ``M``: the inverse of a symmetric positive-definite approximation
        of the Hessian on the tangent space, with which the trust-region inner solve
        preconditions its conjugate gradients (its region is then ``‖η‖_P ≤ Δ``)."""
        raise NotImplementedError(f"{type(self).__name__} has no preconditioner")

    def global_gap(self, M) -> float:
        """Upper bound on ``(f(M) − f*)/|f*|``, 0 exactly at a global minimizer."""
        raise NotImplementedError(f"{type(self).__name__} has no global optimality test")

    def batch(self, M, indices) -> tuple[float, np.ndarray]:
        """``(Σ_{i∈I} f_i(M), Σ_{i∈I} ∇f_i(M))`` over the terms I = ``indices`` of a cost
        that is a sum of ``n_terms`` terms (module docstring, Eq. S1)."""
        raise NotImplementedError(f"{type(self).__name__} is not a sum of terms (no batch)")

    def linear_map(self, M):
        """The method's projection at the point ``M`` as ``(shift, A)``: a row x maps to
        ``(x − shift) A``, shift None meaning no shift.  Default ``(None, M)``: x ↦ xM.
        A method that centers, whitens or rescales first returns its mean and the composed
        matrix (for a two-view method, one such pair per view)."""
        return None, M

    def transform(self, X, M):
        """The rows ``X`` mapped by :meth:`linear_map` at ``M``."""
        from ldr.data.validation import check_new_data

        shift, A = self.linear_map(M)
        X = check_new_data(X, A.shape[0])
        return (X if shift is None else X - shift) @ A

    # --- introspection ----------------------------------------------------------------------
    def provides(self, member: str) -> bool:
        """Whether an optional oracle (or a hand-written egrad/ehvp) is defined."""
        if member in ("cost",):
            return type(self).cost is not Objective.cost or "cost" in self.__dict__
        if member in ("egrad", "ehvp") and f"_raw_{member}" in self.__dict__:
            return self.__dict__[f"_raw_{member}"] is not None
        if member in self.__dict__:
            return self.__dict__[member] is not None
        return getattr(type(self), member) is not getattr(Objective, member)

    def __repr__(self) -> str:
        label = self.name or type(self).__name__
        return f"{label}(shape={self.shape}, manifold={self.manifold!r})"


class FunctionObjective(Objective):
    """An Objective built from plain callables (see :func:`objective`)."""

    def __init__(self, cost: Callable, shape, manifold="stiefel", *, egrad=None, ehvp=None,
                 phi=None, phi0=None, pencil=None, pencil0=None, heuristic=None,
                 transform=None, global_gap=None, name=None, backend: str = "autograd",
                 device=None, compile: bool = False, merge_symmetric: bool = False):
        if not callable(cost):
            raise ParameterError("cost", f"expected a callable, got {cost!r}")
        self.backend = backends.validate(backend)
        backends.validate_options(backend, device, compile, merge_symmetric)
        self.device = device
        self.compile = compile
        self.merge_symmetric = merge_symmetric
        if backend == "numpy" and egrad is None:
            raise ParameterError("egrad", "backend='numpy' differentiates nothing: pass "
                                          "egrad= (and ehvp= for the trust region), or name an "
                                          "autodiff backend ('autograd', 'jax', 'torch')")
        self.cost = cost  # type: ignore[method-assign]
        self.shape = shape
        self.manifold = manifold
        self.name = name or getattr(cost, "__name__", None)
        for member, fn in [("egrad", egrad), ("ehvp", ehvp), ("phi", phi), ("phi0", phi0),
                           ("pencil", pencil), ("pencil0", pencil0), ("heuristic", heuristic),
                           ("transform", transform), ("global_gap", global_gap)]:
            if fn is not None:
                if not callable(fn):
                    raise ParameterError(member, f"expected a callable, got {fn!r}")
                setattr(self, member, fn)
        if backend in backends.OPTIONAL:  # written for the backend's arrays: convert NumPy's
            self._raw_cost = cost
            self._raw_egrad = egrad
            self._raw_ehvp = ehvp
            ad = self.derivatives()
            self.cost = ad.cost  # type: ignore[method-assign]
            self.__dict__.pop("egrad", None), self.__dict__.pop("ehvp", None)


def objective(cost: Callable | None = None, *, shape, manifold="stiefel",
              backend: str = "autograd", **oracles):
    """Make an :class:`Objective` from a cost function (usable as a decorator).

    ``cost`` is written with ``autograd.numpy``; ``egrad`` and ``ehvp`` come from autograd
    unless given in ``oracles`` (which may also hold ``phi``, ``phi0``, ``pencil``,
    ``heuristic`` and ``transform``).  ``backend="jax"`` or ``"torch"``: the cost (and a
    hand-written ``egrad``/``ehvp``) is written with ``jax.numpy`` or PyTorch and receives
    their arrays, and the derivatives are theirs; ``"numpy"``: nothing is differentiated,
    ``egrad`` (and, for the trust region, ``ehvp``) must be given (:mod:`ldr.core.backends`).
    ``device="cuda"`` (with ``backend="torch"``, in ``oracles``): where the cost's tensors
    live; points are sent there.  ``compile=True`` (with ``backend="torch"``): the derivatives
    are compiled by ``torch.compile`` at their first call (seconds; worth it for long or
    repeated solves of one objective).  ``merge_symmetric=True`` (with ``backend="jax"`` or
    ``"torch"``): the derived gradient and Hessian-vector product multiply each symmetric
    matrix the cost closes over once (:mod:`ldr.core.symmetric_products`,
    :mod:`ldr.core.aten_products`).
    A backend that is not installed is a :class:`~ldr.core.errors.ParameterError` naming
    ``backend`` and the pip command.

    Examples
    --------
    >>> import autograd.numpy as anp, numpy as np, ldr
    >>> C = np.diag([3.0, 2.0, 1.0])
    >>> @ldr.objective(shape=(3, 1), manifold="grassmann")
    ... def pca(M):
    ...     return -anp.trace(M.T @ C @ M)
    >>> round(ldr.solve(pca, "trust-region", random_state=0).cost, 8)
    -3.0
    """
    if cost is None:
        return lambda fn: FunctionObjective(fn, shape, manifold, backend=backend, **oracles)
    return FunctionObjective(cost, shape, manifold, backend=backend, **oracles)
