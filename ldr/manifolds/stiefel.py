"""The Stiefel manifold of orthonormal d×r matrices, with the embedded metric."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ldr.core import linalg
from ldr.data import arrays
from ldr.manifolds.orthonormal import OrthonormalColumns

#: why the Stiefel manifold with the embedded metric has no ``log`` nor ``dist`` here
NO_LOGARITHM = (
    "the Stiefel manifold with the embedded (Euclidean) metric has no closed-form Riemannian "
    "logarithm, so no closed-form geodesic distance either (pymanopt has neither); for this "
    "metric the geodesic endpoint problem is solved by iteration, a shooting method such as "
    "Zimmermann & Hüper's (2022) for the one-parameter family of metrics that contains the "
    "embedded one (Zimmermann's 2017 matrix-algebraic algorithm is for the canonical metric "
    "only), which ldr does not implement; Grassmann has both in closed form where only the "
    "span matters, and change(M, N) measures a step between iterates")


def sym(A):
    """The symmetric part ½(A + Aᵀ) of a matrix (of each matrix of a stack)."""
    return 0.5 * (A + A.mT)


class Stiefel(OrthonormalColumns):
    """St(d, r) = {M ∈ R^{d×r} : MᵀM = I}, a Riemannian submanifold of R^{d×r} (Edelman,
    Arias & Smith 1998; Absil, Mahony & Sepulchre 2008, §3.3.2), or the product of ``k``
    copies as stacks (k, d, r).

    * tangent space T_M = {V : MᵀV + VᵀM = 0}; projection
      π_M(Z) = M skew(MᵀZ) + (I − M Mᵀ) Z = Z − M sym(MᵀZ) (survey Eq. 34);
    * Riemannian Hessian along V ∈ T_M (the extrinsic formula of Absil, Mahony & Trumpf
      2013, as pymanopt's ``euclidean_to_riemannian_hessian``):
      Hess f(M)[V] = π_M(H − V S), S = sym(MᵀG), computed as
      π_M(H) − V S − M sym(VᵀM S) (Weingarten map at the normal part M S of G, with
      MᵀV = −VᵀM);
    * step measure ``change``: the spectral norm ‖N − M‖₂ — a cost that is not invariant
      to M → MR can make all its progress inside a fixed span, which a principal angle
      would not see;
    * exponential (:meth:`exp`): Edelman et al.'s closed form for the embedded metric
      (Eq. 2.45); no logarithm nor distance (:meth:`log` and :meth:`dist` raise
      NotImplementedError): this metric has no closed form for them;
    * retraction, random point, feasibility: :class:`OrthonormalColumns`.

    Parameters
    ----------
    d, r : int
        1 ≤ r ≤ d.
    k : int, default 1
        The number of factors; k > 1 stacks them (points (k, d, r)).

    Attributes
    ----------
    dim : int
        k (d r − r(r + 1)/2).

    References
    ----------
    J. P. Cunningham, Z. Ghahramani (2015), "Linear dimensionality reduction: survey,
    insights, and generalizations", JMLR 16, 2859–2900 (the survey).
    A. Edelman, T. A. Arias, S. T. Smith (1998), "The geometry of algorithms with
    orthogonality constraints", SIAM J. Matrix Anal. Appl. 20, 303–353.  P.-A. Absil,
    R. Mahony, R. Sepulchre (2008), *Optimization Algorithms on Matrix Manifolds*.
    P.-A. Absil, R. Mahony, J. Trumpf (2013), "An extrinsic look at the Riemannian
    Hessian", GSI 2013, LNCS 8085, 361–368.  R. Zimmermann (2017), "A matrix-algebraic
    algorithm for the Riemannian logarithm on the Stiefel manifold under the canonical
    metric", SIAM J. Matrix Anal. Appl. 38, 322–342.  R. Zimmermann, K. Hüper (2022),
    "Computing the Riemannian logarithm on the Stiefel manifold: metrics, methods, and
    performance", SIAM J. Matrix Anal. Appl. 43, 953–980.
    """

    def __init__(self, d: int, r: int, k: int = 1):
        super().__init__(d, r, k)
        self.dim = self.k * (d * r - r * (r + 1) // 2)

    @property
    def pymanopt(self):
        import pymanopt.manifolds as pm  # only for the adapter and cross-checks

        d, r = self.shape[-2:]
        return pm.Stiefel(d, r, k=self.k)

    def project(self, M, Z):
        return Z - M @ sym(M.mT @ Z)

    def hess_shift(self, M, G):
        """S = sym(MᵀG)."""
        return sym(M.mT @ G)

    def rhess(self, M, G, H, V, S=None):
        if S is None:
            S = self.hess_shift(M, G)
        return self.project(M, H) - V @ S - M @ sym((V.mT @ M) @ S)

    def exp(self, M, V):
        """Exp_M(V) for the embedded metric, in the closed form of Edelman, Arias & Smith
        (1998, Eq. 2.45): with A = MᵀV (skew-symmetric) and S = VᵀV,

            Exp_M(V) = [M, V] expm([[A, −S], [I, A]]) [[I], [0]] expm(−A),

        the 2r×2r and r×r matrix exponentials (``scipy.linalg.expm``, one per matrix of a
        stack).  The result has orthonormal columns in exact arithmetic; its polar factor
        (:func:`ldr.core.linalg.polar`), the nearest such matrix, is returned, which moves
        it by no more than twice its rounding error.  The exponentials are taken on the
        host: a point of another namespace (PyTorch, CuPy, ...) is copied to NumPy and the
        result copied back to its namespace, device and dtype (:mod:`ldr.data.arrays`).
        """
        self.check_pair(M, V, "V")
        Mh = arrays.to_host(M)
        Vh = arrays.to_host(V)
        r = Mh.shape[-1]
        A = Mh.mT @ Vh
        S = Vh.mT @ Vh
        eye = np.broadcast_to(np.eye(r, dtype=A.dtype), A.shape)
        block = np.block([[A, -S], [eye, A]])
        E = scipy.linalg.expm(block)[..., :, :r] @ scipy.linalg.expm(-A)
        Y = np.concatenate([Mh, Vh], axis=-1) @ E
        return arrays.like(linalg.polar(Y), M)

    def log(self, M, N):
        """Not available: the embedded metric has no closed-form logarithm; Zimmermann &
        Hüper (2022) compute it by a shooting iteration (see ``NO_LOGARITHM``)."""
        raise NotImplementedError(NO_LOGARITHM)

    def dist(self, M, N) -> float:
        """Not available: the geodesic distance is ‖Log_M(N)‖, which has no closed form for
        the embedded metric (see :meth:`log`)."""
        raise NotImplementedError(NO_LOGARITHM)

    def change(self, M, N) -> float:
        """‖N − M‖₂ (the largest over a stack's factors)."""
        return linalg.spectral_norm(N - M)

    def matrix_tangent_basis(self, M):
        """Coordinates (√2 a_ij for i < j, then B): V = M A + M⊥ B with A skew-symmetric
        (A_ij = a_ij, i < j) and B (d − r)×r, an orthonormal basis of T_M."""
        d, r = M.shape
        Mperp = self.orthogonal_complement(M)
        iu = np.triu_indices(r, 1)
        na = len(iu[0])
        s2 = np.sqrt(2.0)

        def to_vector(c):
            A = np.zeros((r, r))
            A[iu] = c[:na] / s2
            return M @ (A - A.T) + Mperp @ c[na:].reshape(d - r, r)

        def to_coords(V):
            return np.concatenate([(M.T @ V)[iu] * s2, (Mperp.T @ V).reshape(-1)])

        return na + (d - r) * r, to_vector, to_coords
