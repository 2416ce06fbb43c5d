"""ldr — linear dimensionality reduction as optimization over matrix manifolds.

>>> import ldr
>>> from ldr.objectives import LDA
>>> X, y = ldr.datasets.load("wine")
>>> result = ldr.solve(LDA(X, y, r=2), "trust-region", start="heuristic", certify=True)
>>> result.converged, result.certificate.is_local_min
(True, True)
"""

from ldr import manifolds, solvers
from ldr.core.objective import Objective, objective
from ldr.core.result import Certificate, Result, Trace
from ldr.driver.certificate import certificate
from ldr.driver.checks import CheckReport, check
from ldr.driver.compare import Comparison, compare
from ldr.driver.loop import solve

__version__ = "0.1.0"

#: subpackages loaded on first use (PEP 562): ``import ldr`` costs little more than NumPy and
#: SciPy's linear algebra — no scikit-learn, pandas, pymanopt (nor, through it, PyTorch or
#: JAX), matplotlib or Dask until something needs them
_LAZY = ("data", "datasets", "estimators", "kernels", "objectives", "registry")
#: the lazy names that live below the top level
_WHERE = {"datasets": "ldr.data.datasets", "registry": "ldr.driver.registry"}

__all__ = [
    "Certificate", "CheckReport", "Comparison", "Objective", "Result", "Trace", "certificate",
    "check", "compare", "manifolds", "objective", "solve", "solvers", *_LAZY,
]


def __getattr__(name: str):
    """``ldr.objectives``, ``ldr.estimators``, ``ldr.datasets``, ... on first use."""
    if name in _LAZY:
        import importlib

        return importlib.import_module(_WHERE.get(name, f"ldr.{name}"))
    raise AttributeError(f"module 'ldr' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
