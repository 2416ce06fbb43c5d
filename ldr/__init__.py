"""ldr — linear dimensionality reduction as optimization over matrix manifolds.

>>> import ldr
>>> from ldr.objectives import LDA
>>> X, y = ldr.datasets.load("wine")
>>> result = ldr.solve(LDA(X, y, r=2), "trust-region", M0="heuristic", certify=True)
>>> result.converged, result.certificate.is_local_min
(True, True)
"""

from ldr import datasets, kernels, manifolds, objectives, solvers  # noqa: E402,I001  (subpackages import the core above)
from ldr.certificate import certificate
from ldr.checks import CheckReport, check
from ldr.compare import Comparison, compare
from ldr.driver import solve
from ldr.objective import Objective, objective
from ldr.result import Certificate, Result, Trace

__version__ = "0.1.0"

__all__ = [
    "Certificate", "CheckReport", "Comparison", "Objective", "Result", "Trace", "certificate",
    "check", "compare",
    "datasets", "kernels", "manifolds", "objective", "objectives", "solve", "solvers",
]
__all__ += ["estimators"]  # a lazy attribute (below)


def __getattr__(name: str):
    """``ldr.estimators`` on first use (PEP 562): ``import ldr`` stays free of the
    scikit-learn estimator layer until it is asked for."""
    if name == "estimators":
        import importlib

        return importlib.import_module("ldr.estimators")
    raise AttributeError(f"module 'ldr' has no attribute {name!r}")
