"""``ldr.check``: verify an objective's oracles numerically.

At a (random) point M, with unit random directions E:

* **egrad** — central differences ``(f(M+tE) − f(M−tE)) / 2t`` against ``⟨egrad(M), E⟩``,
  in ambient directions (egrad is the gradient of the cost's smooth extension), for
  ``t ∈ {1e-3, …, 1e-7}``; the best relative error must be below ``rtol``;
* **ehvp** — ``(egrad(M+tV) − egrad(M−tV)) / 2t`` against ``ehvp(M, V)``, same protocol;
* **phi** — the Φ-oracle contract ``egrad(M) = 2 Φ(M) M`` and ``Φ = Φᵀ``;
* **pencil** — A symmetric, B symmetric positive definite;
* **invariance** — ``f(MR) = f(M)`` for a random orthogonal R: required on Grassmann, and
  reported on Stiefel (an invariant cost can move to the cheaper Grassmann manifold).

A deliberately wrong gradient (a factor, a sign, a missing term) gives a relative error of
order one, eight orders above the default tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ldr.objective import Objective
from ldr.problem import Problem


@dataclass
class CheckItem:
    name: str
    ok: bool
    error: float
    tol: float
    message: str


@dataclass
class CheckReport:
    """The outcome of :func:`check`; truthy when every item passed."""

    objective: str
    items: list[CheckItem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(item.ok for item in self.items)

    def __bool__(self) -> bool:
        return self.ok

    def __getitem__(self, name: str) -> CheckItem:
        for item in self.items:
            if item.name == name:
                return item
        raise KeyError(f"no check named {name!r}; have {[i.name for i in self.items]}")

    def __str__(self) -> str:
        lines = [f"ldr.check({self.objective}): {'PASS' if self.ok else 'FAIL'}"]
        for it in self.items:
            status = "ok  " if it.ok else "FAIL"
            lines.append(f"  [{status}] {it.name:<11} error {it.error:9.2e} (tol {it.tol:.0e})"
                         f"  {it.message}")
        return "\n".join(lines)


_STEPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7)


def _check_egrad(problem: Problem, M, rng, n_dirs: int, rtol: float) -> CheckItem:
    geom = problem.manifold
    G = problem.egrad(M)
    worst = 0.0
    for _ in range(n_dirs):
        E = geom.random_ambient(rng)
        E = geom.lincomb(1.0 / geom.norm(E), E)
        exact = geom.inner(G, E)
        scale = max(abs(exact), geom.norm(G), 1e-12)
        errs = [abs((problem.cost(geom.lincomb(1.0, M, t, E))
                     - problem.cost(geom.lincomb(1.0, M, -t, E))) / (2 * t)
                    - exact) / scale for t in _STEPS]
        worst = max(worst, min(errs))
    return CheckItem("egrad", worst <= rtol, worst, rtol,
                     "directional derivative vs central differences of cost")


def _check_ehvp(problem: Problem, M, rng, n_dirs: int, rtol: float) -> CheckItem:
    geom = problem.manifold
    worst = 0.0
    for _ in range(n_dirs):
        V = geom.random_ambient(rng)
        V = geom.lincomb(1.0 / geom.norm(V), V)
        exact = problem.ehvp(M, V)
        errs = []
        for t in _STEPS:
            fd = geom.lincomb(1 / (2 * t), problem.egrad(geom.lincomb(1.0, M, t, V)),
                              -1 / (2 * t), problem.egrad(geom.lincomb(1.0, M, -t, V)))
            diff = geom.lincomb(1.0, fd, -1.0, exact)
            errs.append(geom.norm(diff) / max(geom.norm(exact), geom.norm(problem.egrad(M)),
                                              1e-12))
        worst = max(worst, min(errs))
    return CheckItem("ehvp", worst <= rtol, worst, rtol,
                     "Hessian-vector product vs central differences of egrad")


def _check_phi(problem: Problem, M, rtol: float) -> CheckItem:
    Phi = problem.phi(M)
    G = problem.egrad(M)
    d = G.shape[0]
    if Phi.shape != (d, d):
        return CheckItem("phi", False, np.inf, rtol, f"phi(M) has shape {Phi.shape}, not {(d, d)}")
    asym = np.linalg.norm(Phi - Phi.T) / max(np.linalg.norm(Phi), 1e-300)
    err = np.linalg.norm(G - 2 * Phi @ M) / max(np.linalg.norm(G), np.linalg.norm(Phi), 1e-300)
    ok = err <= rtol and asym <= rtol
    return CheckItem("phi", ok, max(err, asym), rtol,
                     f"egrad(M) = 2 Φ(M) M (Φ asymmetry {asym:.1e})")


def _check_pencil(problem: Problem, M, rtol: float) -> CheckItem:
    A, B = problem.pencil(M)
    asym = max(np.linalg.norm(A - A.T) / max(np.linalg.norm(A), 1e-300),
               np.linalg.norm(B - B.T) / max(np.linalg.norm(B), 1e-300))
    lmin = float(np.linalg.eigvalsh(0.5 * (B + B.T))[0])
    ok = asym <= rtol and lmin > 0
    return CheckItem("pencil", ok, asym, rtol, f"A, B symmetric; λ_min(B) = {lmin:.3e} (> 0)")


def _check_invariance(problem: Problem, M, rng, rtol: float) -> CheckItem:
    geom = problem.manifold
    parts = geom.parts

    def rotate(m, r):
        Q, _ = np.linalg.qr(rng.standard_normal((r, r)))
        return m @ Q

    if geom.is_product:
        MR = tuple(rotate(m, p.shape[1]) for m, p in zip(M, parts))
    else:
        MR = rotate(M, parts[0].shape[1])
    f, fR = problem.cost(M), problem.cost(MR)
    err = abs(f - fR) / max(abs(f), 1e-300)
    invariant = err <= rtol
    needs = [p.kind == "grassmann" for p in parts]
    if any(needs):
        msg = "cost(MR) = cost(M), as Grassmann requires" if invariant else \
            "cost changes under M → MR: it is NOT a Grassmann cost; use 'stiefel'"
        return CheckItem("invariance", invariant, err, rtol, msg)
    if all(p.kind == "euclidean" for p in parts):
        return CheckItem("invariance", True, err, rtol, "not applicable (Euclidean)")
    msg = "cost is invariant to M → MR: 'grassmann' would also do" if invariant else \
        "cost depends on the basis, Stiefel is the right manifold"
    return CheckItem("invariance", True, err, rtol, msg)


def check(objective: Objective, M=None, *, seed=0, n_dirs: int = 3, rtol: float = 1e-6
          ) -> CheckReport:
    """Check ``objective``'s oracles at ``M`` (default: a random point from ``seed``).

    Returns a :class:`CheckReport` (truthy when every check passed; ``print`` it for a table).
    """
    problem = Problem(objective)
    rng = np.random.default_rng(seed)
    M = problem.manifold.random_point(rng) if M is None else \
        problem.manifold.validate_point(M, "M")
    report = CheckReport(repr(objective))
    report.items.append(_check_egrad(problem, M, rng, n_dirs, rtol))
    report.items.append(_check_ehvp(problem, M, rng, n_dirs, rtol))
    if problem.provides("phi"):
        report.items.append(_check_phi(problem, M, 1e-10))
    if problem.provides("pencil"):
        report.items.append(_check_pencil(problem, M, 1e-10))
    report.items.append(_check_invariance(problem, M, rng, 1e-10))
    return report
