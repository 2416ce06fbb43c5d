"""The Grassmann manifold of r-dimensional subspaces of R^d, represented by orthonormal
bases."""

from __future__ import annotations

from ldr.core.errors import ParameterError
from ldr.manifolds.orthonormal import OrthonormalColumns, sin_largest_angle


class Grassmann(OrthonormalColumns):
    """Gr(d, r), the r-dimensional subspaces of R^d, as the quotient St(d, r)/O(r): a point
    is an orthonormal basis M of its span, and a cost must be invariant to M → MR for
    orthogonal R (Edelman, Arias & Smith 1998; Absil, Mahony & Sepulchre 2004); or the
    product of ``k`` copies as stacks (k, d, r).

    * horizontal space H_M = {V : MᵀV = 0}; projection π_M(Z) = (I − M Mᵀ) Z;
    * Riemannian Hessian along V ∈ H_M: Hess f(M)[V] = π_M(H) − V MᵀG, with G the
      Euclidean gradient and H the Euclidean Hessian along V (Absil, Mahony & Trumpf 2013;
      pymanopt's ``euclidean_to_riemannian_hessian``);
    * step measure ``change``: the sine of the largest principal angle between the spans
      (:func:`~ldr.manifolds.sin_largest_angle`): a rotation of the basis inside its span is
      no move;
    * retraction, random point, feasibility: :class:`OrthonormalColumns`.

    Parameters
    ----------
    d, r : int
        1 ≤ r < d (r = d is a single point).
    k : int, default 1
        The number of factors; k > 1 stacks them (points (k, d, r)).

    Attributes
    ----------
    dim : int
        k (d − r) r.

    References
    ----------
    A. Edelman, T. A. Arias, S. T. Smith (1998), "The geometry of algorithms with
    orthogonality constraints", SIAM J. Matrix Anal. Appl. 20, 303–353.  P.-A. Absil,
    R. Mahony, R. Sepulchre (2004), "Riemannian geometry of Grassmann manifolds with a view
    on algorithmic computation", Acta Appl. Math. 80, 199–220.  P.-A. Absil, R. Mahony,
    J. Trumpf (2013), "An extrinsic look at the Riemannian Hessian", GSI 2013, LNCS 8085,
    361–368.
    """

    def __init__(self, d: int, r: int, k: int = 1):
        super().__init__(d, r, k)
        if r == d:
            raise ParameterError("r", f"a Grassmann manifold needs r < d, got (d, r) = "
                                      f"{(d, r)}: Gr(d, d) is one point")
        self.dim = self.k * (d - r) * r

    @property
    def pymanopt(self):
        import pymanopt.manifolds as pm  # only for the adapter and cross-checks

        d, r = self.shape[-2:]
        return pm.Grassmann(d, r, k=self.k)

    def project(self, M, Z):
        return Z - M @ (M.mT @ Z)

    def hess_shift(self, M, G):
        """MᵀG."""
        return M.mT @ G

    def rhess(self, M, G, H, V, S=None):
        if S is None:
            S = self.hess_shift(M, G)
        return self.project(M, H) - V @ S

    def change(self, M, N) -> float:
        """The sine of the largest principal angle between span(M) and span(N) (the largest
        over a stack's factors)."""
        return sin_largest_angle(M, N)

    def matrix_tangent_basis(self, M):
        """Coordinates B: V = M⊥ B, B (d − r)×r, an orthonormal basis of H_M."""
        d, r = M.shape
        Mperp = self.orthogonal_complement(M)
        return ((d - r) * r, lambda c: Mperp @ c.reshape(d - r, r),
                lambda V: (Mperp.T @ V).reshape(-1))
