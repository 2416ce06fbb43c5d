"""Solvers, one per module, each named by a short string.

========================  ==================================  =====================
name                      class (in ``ldr.solvers``)          needs
========================  ==================================  =====================
``"gradient"``            :class:`GradientDescent`            cost (+ egrad)
``"conjugate-gradient"``  :class:`ConjugateGradient`          cost (+ egrad)
``"trust-region"``        :class:`TrustRegion`                cost, egrad, ehvp
``"pymanopt"``            :class:`Pymanopt`                   cost (+ egrad, ehvp)
``"ism"``                 :class:`ISM`                        phi (+ phi0)
``"scf"``                 :class:`SCF`                        pencil
========================  ==================================  =====================
"""

from __future__ import annotations

from ldr.solvers.base import Solver, State
from ldr.solvers.conjugate_gradient import ConjugateGradient
from ldr.solvers.gradient import GradientDescent
from ldr.solvers.ism import ISM
from ldr.solvers.pymanopt_adapter import Pymanopt
from ldr.solvers.scf import SCF
from ldr.solvers.trust_region import TrustRegion

REGISTRY: dict[str, type[Solver]] = {
    "gradient": GradientDescent,
    "conjugate-gradient": ConjugateGradient,
    "trust-region": TrustRegion,
    "pymanopt": Pymanopt,
    "ism": ISM,
    "scf": SCF,
}


def register(name: str, cls: type[Solver]) -> None:
    """Make ``cls`` available by ``name`` wherever a solver is accepted."""
    REGISTRY[name] = cls


def get_solver(spec) -> Solver:
    """A Solver instance from a name or an instance."""
    if isinstance(spec, Solver):
        return spec
    if isinstance(spec, str):
        if spec not in REGISTRY:
            raise ValueError(f"solver: unknown name {spec!r}; choose one of {sorted(REGISTRY)}")
        return REGISTRY[spec]()
    raise ValueError(f"solver: expected a name {sorted(REGISTRY)} or a Solver, got {spec!r}")


__all__ = ["ISM", "REGISTRY", "SCF", "ConjugateGradient", "GradientDescent", "Pymanopt", "Solver",
           "State", "TrustRegion", "get_solver", "register"]
