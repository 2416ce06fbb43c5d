"""ldr — linear dimensionality reduction as optimization over matrix manifolds.

>>> import ldr
>>> from ldr.objectives import LDA
>>> X, y = ldr.datasets.load("wine")
>>> result = ldr.solve(LDA(X, y, r=2), "trust-region", M0="heuristic", certify=True)
>>> result.converged, result.certificate.is_local_min
(True, True)
"""

from ldr import manifolds, solvers
from ldr.certificate import certificate
from ldr.checks import CheckReport, check
from ldr.compare import Comparison, compare
from ldr.driver import solve
from ldr.objective import Objective, objective
from ldr.result import Certificate, Result, Trace

__version__ = "0.1.0"

#: subpackages loaded on first use (PEP 562): ``import ldr`` costs little more than NumPy and
#: SciPy's linear algebra — no scikit-learn, pandas, pymanopt (nor, through it, PyTorch or
#: JAX), matplotlib or Dask until something needs them
_LAZY = ("data", "datasets", "estimators", "kernels", "objectives", "registry")

__all__ = [
    "Certificate", "CheckReport", "Comparison", "Objective", "Result", "Trace", "certificate",
    "check", "compare", "manifolds", "objective", "solve", "solvers", *_LAZY,
]


def __getattr__(name: str):
    """``ldr.objectives``, ``ldr.estimators``, ``ldr.datasets``, ... on first use."""
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"ldr.{name}")
    raise AttributeError(f"module 'ldr' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
