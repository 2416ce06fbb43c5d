"""The ISM kernel family: kernels k = f(β) of a scalar β that depends on W only through WWᵀ.

Two types (ISM+ paper, Table 2; interpretable-KDR paper, kernel family):

* **difference** — β_ij = ‖Wᵀ(x_i − x_j)‖²: Gaussian f = exp(−β/2σ²), squared f = β,
  multiquadric f = √(β + c²);
* **product** — β_ij = x_iᵀWWᵀx_j: linear f = β, polynomial f = (β + c)^p.

For the HSIC cost −Σ_ij Γ_ij f(β_ij) the Φ-oracle (``∇ = 2ΦW``) is, with Ψ = Γ ⊙ f′(β)
and L_Ψ = diag(Ψ1) − Ψ:

* difference: Φ = −2 Xᵀ L_Ψ X         (Gaussian: Φ = Xᵀ L_{Γ⊙K} X / σ²)
* product:    Φ = −Xᵀ Ψ X

so a kernel needs only f, f′ and f″ (:meth:`Kernel.derivatives`).  Built-in kernels write
them in closed form, once, for any array namespace (the namespace ``xp`` of the data: NumPy,
PyTorch, CuPy, array-api-strict; on the data's device); a user's kernel gives f (with
``autograd.numpy``) and its type, and f′, f″ come from autograd (NumPy only).
Conic combinations ``a * k1 + b * k2`` (a, b ≥ 0) are kernels whose Φ is the same
combination of Φs.

References
----------
Wu, Miller, Chang, Sznaier & Dy (2019), Solving interpretable kernel dimension reduction,
NeurIPS (the kernel family, Tables 2–3).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from autograd import elementwise_grad

from ldr.core.errors import ParameterError
from ldr.data import arrays

KINDS = ("difference", "product")


def beta(kind: str, Z, Zb=None):
    """β between the rows of ``Zb`` (default ``Z``) and of ``Z``, with ``Z = XW`` (in their
    namespace): z_iᵀz_j (product) or ‖z_i‖² + ‖z_j‖² − 2 z_iᵀz_j floored at 0 (difference)."""
    xp = arrays.namespace(Z)
    Zb = Z if Zb is None else Zb
    out = Zb @ Z.T
    if kind == "product":
        return out
    out *= -2.0  # in place: no n×n temporaries beyond the result
    out += xp.sum(Zb * Zb, axis=1)[:, None]
    out += xp.sum(Z * Z, axis=1)[None, :]
    return xp.clip(out, min=0.0)


class Kernel:
    """A kernel of the ISM family: ``kind`` and the scalar function f(β).

    Subclasses define ``f`` (written with ``autograd.numpy``, or the array namespace of β);
    the built-ins also write f′ and f″ in closed form (:meth:`derivatives`).  ``fit(X)``
    sets data-dependent parameters once (the Gaussian's default σ).
    """

    kind: str = "difference"

    def f(self, b):
        return self.derivatives(b, arrays.namespace(b), (0,))[0]

    def df(self, b):
        """f′(β)."""
        return self.derivatives(b, arrays.namespace(b), (1,))[0]

    def d2f(self, b):
        """f″(β)."""
        return self.derivatives(b, arrays.namespace(b), (2,))[0]

    def derivatives(self, b, xp, orders=(0, 1)) -> tuple:
        """``(f(β), f′(β), f″(β))`` for the ``orders`` asked (0, 1, 2), in the array
        namespace ``xp`` of β.  The built-in kernels write them in closed form with the array
        API standard's operations, for every namespace; here, for any other kernel
        (:class:`Custom`), f′ and f″ are autograd's derivatives of f: NumPy only (another
        namespace is a ParameterError saying what does work)."""
        if xp is not np:
            raise ParameterError("kernel", f"{self!r} computes in NumPy only (its f is "
                                 "differentiated by autograd): for data of another array "
                                 f"namespace use a built-in kernel ({', '.join(BUILTIN)}) or a "
                                 "conic combination of them, or pass NumPy data")
        if "_grads" not in self.__dict__:
            first = elementwise_grad(self.f)
            self._grads = (self.f, first, elementwise_grad(first))
        return tuple(self._grads[k](b) for k in orders)

    def fit(self, X: np.ndarray, weights=None) -> Kernel:
        """Set data-dependent parameters from the (scaled) data (rows of frequency
        ``weights``, optional); returns self."""
        return self

    def terms(self) -> list[tuple[float, Kernel]]:
        """The kernel as a conic combination: [(weight, kernel), ...]."""
        return [(1.0, self)]

    def gram(self, X, W):
        """The n×n kernel matrix K_XW (in the namespace of X)."""
        Z = X @ W
        return sum(w * k.f(beta(k.kind, Z)) for w, k in self.terms())

    def __add__(self, other: Kernel) -> Combination:
        if not isinstance(other, Kernel):
            return NotImplemented
        return Combination(self.terms() + other.terms())

    def __mul__(self, a: float) -> Combination:
        if isinstance(a, Kernel) or not np.isscalar(a):
            return NotImplemented
        return Combination([(float(a) * w, k) for w, k in self.terms()])

    __rmul__ = __mul__

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"


class Combination(Kernel):
    """A conic combination Σ a_t k_t (a_t ≥ 0) of ISM-family kernels."""

    kind = "combination"

    def __init__(self, terms: list[tuple[float, Kernel]]):
        for w, k in terms:
            if not (np.isfinite(w) and w >= 0):
                raise ParameterError("kernel", f"combination weights must be >= 0, got {w}")
            if not isinstance(k, Kernel) or isinstance(k, Combination):
                raise ParameterError("kernel", f"expected ISM-family kernels, got {k!r}")
        self._terms = list(terms)

    def terms(self):
        return list(self._terms)

    def fit(self, X, weights=None):
        for _, k in self._terms:
            k.fit(X, weights)
        return self

    def __repr__(self) -> str:
        return " + ".join(f"{w:g}*{k!r}" for w, k in self._terms)


class Gaussian(Kernel):
    """k = exp(−‖Wᵀ(x_i − x_j)‖² / 2σ²); σ defaults to the median pairwise distance of X."""

    kind = "difference"

    def __init__(self, sigma: float | None = None):
        if sigma is not None and not (np.isscalar(sigma) and np.isfinite(sigma) and sigma > 0):
            raise ParameterError("sigma", f"must be a positive number, got {sigma!r}")
        self.sigma = sigma

    def fit(self, X, weights=None):
        if self.sigma is None:
            self.sigma = median_distance(X, weights=weights)
        return self

    @property
    def s2(self) -> float:
        """2σ², the Gaussian's width in β's units (a Python float)."""
        if self.sigma is None:
            raise ValueError("Gaussian kernel: sigma is not set; call fit(X) or pass sigma")
        return 2.0 * float(self.sigma) ** 2

    def derivatives(self, b, xp, orders=(0, 1)):
        """f⁽ᵏ⁾(β) = (−1)ᵏ exp(−β/2σ²) / (2σ²)ᵏ: one ``exp`` for all the orders.  (2σ²)ᵏ is a
        Python float: where it overflows (σ beyond about 1e77 for f″) the derivative's scale
        is not representable, and that is an OverflowError, not a silent 0."""
        s2 = self.s2  # a Python scalar: array-api-strict takes no NumPy scalars
        K = xp.exp(b * (-1.0 / s2))
        return tuple(K if k == 0 else K * ((-1.0) ** k / s2**k) for k in orders)


class _Identity(Kernel):
    """f(β) = β (the base of :class:`Squared` and :class:`Linear`)."""

    def derivatives(self, b, xp, orders=(0, 1)):
        return tuple(b if k == 0 else (xp.ones_like(b) if k == 1 else xp.zeros_like(b))
                     for k in orders)


class Squared(_Identity):
    """k = ‖Wᵀ(x_i − x_j)‖² (difference type)."""

    kind = "difference"


class Multiquadric(Kernel):
    """k = √(‖Wᵀ(x_i − x_j)‖² + c²) (difference type)."""

    kind = "difference"

    def __init__(self, c: float = 1.0):
        if not (np.isscalar(c) and np.isfinite(c) and c != 0):
            raise ParameterError("c", f"must be a non-zero number, got {c!r}")
        self.c = c

    def derivatives(self, b, xp, orders=(0, 1)):
        """√(β + c²), ½(β + c²)^(−1/2), −¼(β + c²)^(−3/2) from one square root."""
        u = b + float(self.c) ** 2
        root = xp.sqrt(u)
        return tuple(root if k == 0 else (0.5 / root if k == 1 else -0.25 / (u * root))
                     for k in orders)


class Linear(_Identity):
    """k = x_iᵀWWᵀx_j (product type)."""

    kind = "product"


class Polynomial(Kernel):
    """k = (x_iᵀWWᵀx_j + c)^p (product type)."""

    kind = "product"

    def __init__(self, p: int = 2, c: float = 1.0):
        if not (np.isscalar(p) and p >= 1):
            raise ParameterError("p", f"must be a number >= 1, got {p!r}")
        if not (np.isscalar(c) and np.isfinite(c)):
            raise ParameterError("c", f"must be a finite number, got {c!r}")
        self.p = p
        self.c = c

    def derivatives(self, b, xp, orders=(0, 1)):
        p = int(self.p) if float(self.p).is_integer() else float(self.p)
        u = b + float(self.c)
        coef = {0: 1, 1: p, 2: p * (p - 1)}
        return tuple(coef[k] * u ** (p - k) for k in orders)


class Custom(Kernel):
    """A user kernel f(β) of the given type; f′ and f″ come from autograd.

    >>> import autograd.numpy as anp
    >>> k = Custom(lambda b: 1.0 / (1.0 + b), kind="difference")   # inverse quadratic
    >>> float(k.df(np.array(1.0)))
    -0.25
    """

    def __init__(self, f: Callable, kind: str = "difference"):
        if not callable(f):
            raise ParameterError("f", f"expected a callable f(beta), got {f!r}")
        if kind not in KINDS:
            raise ParameterError("kind", f"expected one of {KINDS}, got {kind!r}")
        self._f = f
        self.kind = kind

    def f(self, b):
        return self._f(b)

    def __repr__(self) -> str:
        return f"Custom({getattr(self._f, '__name__', 'f')}, kind={self.kind!r})"


#: the kernels that compute in any array namespace (:meth:`Kernel.derivatives`)
NAMESPACE_KERNELS = (Gaussian, Squared, Multiquadric, Linear, Polynomial)


def in_namespace(kernel: Kernel) -> bool:
    """Whether every term of ``kernel`` is a built-in (exactly, not a subclass that may
    redefine f), so that HSIC's sums run in the data's array namespace."""
    return all(type(k) in NAMESPACE_KERNELS for _, k in kernel.terms())


BUILTIN = {"gaussian": Gaussian, "squared": Squared, "multiquadric": Multiquadric,
           "linear": Linear, "polynomial": Polynomial}


def make_kernel(spec) -> Kernel:
    """A Kernel from a name (``"gaussian"``, ``"polynomial"``, ...) or an instance (copied)."""
    import copy

    if isinstance(spec, Kernel):
        return copy.deepcopy(spec)
    if isinstance(spec, str) and spec in BUILTIN:
        return BUILTIN[spec]()
    raise ParameterError("kernel", f"expected one of {sorted(BUILTIN)} or an ldr.kernels.Kernel, "
                     f"got {spec!r}")


#: :func:`median_distance` takes the distances of a seeded subsample of this many rows
MEDIAN_MAX_SAMPLES = 2000


def median_distance(X, max_samples: int = MEDIAN_MAX_SAMPLES, seed: int = 0,
                    weights=None) -> float:
    """Median pairwise Euclidean distance of the rows of X (a seeded subsample above
    ``max_samples`` rows, taken in X's namespace); the Gaussian kernel's default σ, computed
    once on the host (``scipy.spatial.distance.pdist``).

    With frequency ``weights`` w, the median over the pairs of the rows repeated by their
    weights: the pair (i, j), i < j, counts w_i w_j times and each row's copies add
    w_i (w_i − 1)/2 pairs at distance 0 (for integer weights exactly ``np.median`` of the
    repeated rows' distances)."""
    w = None if weights is None else np.asarray(weights, dtype=float)
    if X.shape[0] > max_samples:  # the subsample taken where X is: only it reaches the host
        idx = np.random.default_rng(seed).choice(X.shape[0], max_samples, replace=False)
        xp = arrays.namespace(X)
        X = xp.take(X, xp.asarray(idx, device=arrays.device(X)), axis=0)
        w = None if w is None else w[idx]
    X = np.asarray(arrays.to_host(X), dtype=float)
    from scipy.spatial.distance import pdist

    dist = pdist(X)
    if w is not None:
        i, j = np.triu_indices(X.shape[0], 1)
        values = np.concatenate([[0.0], dist])
        counts = np.concatenate([[np.sum(w * (w - 1)) / 2], w[i] * w[j]])
        order = np.argsort(values, kind="stable")
        values = values[order]
        cum = np.cumsum(counts[order])
        total = cum[-1]
        # the (total − 1)/2-th element of the sorted multiset, averaged with the next one
        # when total is even (np.median's rule; for real weights, the weighted median)
        lo = values[np.searchsorted(cum, np.floor((total - 1) / 2), side="right")]
        hi = values[np.searchsorted(cum, np.ceil((total - 1) / 2), side="right")]
        med = float(0.5 * (lo + hi)) if total > 0 else 0.0
    else:
        med = float(np.median(dist)) if dist.size else 0.0
    if not med > 0:
        raise ParameterError("X", "the median pairwise distance is 0 (duplicated samples); "
                         "pass sigma explicitly")
    return med
