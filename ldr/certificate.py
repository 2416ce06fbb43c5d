"""Second-order optimality certificates from Hessian-vector products.

At a point M, the Riemannian Hessian is a self-adjoint operator on the tangent space (the
horizontal space on Grassmann).  In an orthonormal basis of that space (built by
:meth:`ldr.manifolds.Geometry.tangent_basis`) it is a symmetric matrix; its extreme
eigenvalues come from Lanczos (``scipy.sparse.linalg.eigsh``) on Hessian-vector products, or
from a dense ``eigh`` when the space is small.  A local minimizer has a vanishing gradient and
a positive-semidefinite Hessian.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from ldr.objective import Objective
from ldr.problem import Problem
from ldr.result import Certificate


def hessian_operator(problem: Problem, M):
    """``(dim, matvec)``: the Riemannian Hessian at ``M`` in an orthonormal tangent basis."""
    geom = problem.manifold
    G = problem.egrad(M)
    dim, to_vector, to_coords = geom.tangent_basis(M)

    def matvec(c):
        c = np.asarray(c, dtype=float).reshape(-1)
        return to_coords(problem.rhess(M, G, to_vector(c)))

    return dim, matvec


def certificate(objective: Objective | Problem, M, *, gtol: float = 1e-6, tol: float = 1e-8,
                dense_max: int = 200) -> Certificate:
    """Riemannian gradient norm and the extreme Hessian eigenvalues at ``M``.

    Parameters
    ----------
    objective : Objective (or Problem)
    M : point on the objective's manifold
    gtol : gradient-norm tolerance for ``is_local_min``
    tol : relative tolerance on negative eigenvalues for ``psd``
    dense_max : tangent dimensions up to this use a dense ``eigh``; larger ones use Lanczos.
    """
    problem = objective if isinstance(objective, Problem) else Problem(objective)
    M = problem.manifold.validate_point(M, "M")
    G = problem.egrad(M)
    grad_norm = problem.manifold.norm(problem.rgrad(M, G))
    dim, matvec = hessian_operator(problem, M)
    if dim <= dense_max:
        H = np.column_stack([matvec(e) for e in np.eye(dim)])
        w = scipy.linalg.eigvalsh(0.5 * (H + H.T))
        lo, hi, method = float(w[0]), float(w[-1]), "dense eigh"
    else:
        op = LinearOperator((dim, dim), matvec=matvec, dtype=float)
        v0 = np.ones(dim) / np.sqrt(dim)
        try:
            hi = float(eigsh(op, k=1, which="LA", tol=1e-10, v0=v0,
                             return_eigenvectors=False)[0])
            lo = float(eigsh(op, k=1, which="SA", tol=1e-10, v0=v0,
                             return_eigenvectors=False)[0])
            method = "Lanczos (eigsh)"
        except ArpackNoConvergence as exc:
            vals = exc.eigenvalues
            lo = float(np.min(vals)) if len(vals) else np.nan
            hi = float(np.max(vals)) if len(vals) else np.nan
            method = "Lanczos (eigsh, NOT converged)"
    return Certificate(grad_norm=grad_norm, hess_min=lo, hess_max=hi, dim=dim, gtol=gtol,
                       tol=tol, method=method)
