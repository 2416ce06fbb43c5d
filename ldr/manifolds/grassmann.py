"""The Grassmann manifold of r-dimensional subspaces of R^d, represented by orthonormal
bases."""

from __future__ import annotations

from ldr.core import linalg
from ldr.core.errors import ParameterError
from ldr.data import arrays
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
    * geodesics (:meth:`exp`, :meth:`log`, :meth:`dist`): for horizontal V = U Σ Wᵀ (thin
      SVD), Exp_M(V) = M W cos Σ Wᵀ + U sin Σ Wᵀ (Edelman et al., Eq. 2.65); the logarithm
      and the distance ‖θ‖₂ from the principal angles θ between the spans (Absil et al.
      2004), each angle from both its cosine and its sine;
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
    361–368.  Å. Björck, G. H. Golub (1973), "Numerical methods for computing angles between
    linear subspaces", Math. Comp. 27, 579–594.  T. Bendokat, R. Zimmermann, P.-A. Absil
    (2024), "A Grassmann manifold handbook: basic geometry and computational aspects", Adv.
    Comput. Math. 50, 6.
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

    def exp(self, M, V):
        """Exp_M(V) for a horizontal V (MᵀV = 0): with the thin SVD V = U Σ Wᵀ,

            Exp_M(V) = M W cos Σ Wᵀ + U sin Σ Wᵀ

        (Edelman, Arias & Smith 1998, Eq. 2.65; Absil et al. 2004), the end of the
        geodesic t ↦ Exp_M(tV), whose basis moves orthogonally to its span.  The matrix has
        orthonormal columns in exact arithmetic; its polar factor Y (YᵀY)^(−1/2)
        (:func:`ldr.core.linalg.polar`) is returned: the same span, and the nearest matrix
        with orthonormal columns, so the basis moves by no more than twice the rounding
        error.  Computed in the namespace of ``M`` (one SVD per matrix of a stack).
        """
        self.check_pair(M, V, "V")
        xp = arrays.namespace(M, V)
        U, s, Wt = xp.linalg.svd(V, full_matrices=False)
        W = Wt.mT
        Y = (M @ (W * xp.expand_dims(xp.cos(s), axis=-2))
             + U * xp.expand_dims(xp.sin(s), axis=-2)) @ Wt
        return linalg.polar(Y)

    def log(self, M, N):
        """Log_M(N): the horizontal V at ``M`` of least norm with span(Exp_M(V)) = span(N),
        V = U Θ Wᵀ with Θ the principal angles between the spans.

        The closed form of Absil, Mahony & Sepulchre (2004) is V = U arctan(S) Wᵀ for
        (I − M Mᵀ) N (MᵀN)⁻¹ = U S Wᵀ.  It is computed here without the inverse, after the
        modified algorithm of Bendokat, Zimmermann & Absil: N* = N polar(NᵀM) is the basis
        of span(N) nearest to M (Procrustes), so that P = MᵀN* = W cos Θ Wᵀ is symmetric
        positive semidefinite, and its horizontal part H = N* − M P = U sin Θ Wᵀ (thin SVD)
        gives the sines; each angle is θⱼ = atan2(sin θⱼ, wⱼᵀ P wⱼ), from its sine and its
        cosine together: a small angle from the sine of a residual (Björck & Golub 1973),
        one near π/2 from its cosine, each to an absolute error of a few rounding units,
        where the arccos of the cosines loses the angles below about 1e-8.  Then
        Exp_M(V) = N* (Eq. 2.65).  The logarithm is unique where every angle is below π/2
        (MᵀN invertible); at π/2 exactly (the cut locus) one of the shortest geodesics is
        returned.  Computed in the namespace of ``M`` (per matrix of a stack).
        """
        self.check_pair(M, N, "N")
        xp = arrays.namespace(M, N)
        Nstar = N @ linalg.polar(N.mT @ M)
        P = M.mT @ Nstar
        U, sines, Wt = xp.linalg.svd(Nstar - M @ P, full_matrices=False)
        cosines = xp.sum(Wt * (Wt @ P), axis=-1)
        theta = xp.atan2(sines, cosines)
        return (U * xp.expand_dims(theta, axis=-2)) @ Wt

    def dist(self, M, N) -> float:
        """The geodesic distance ‖θ‖₂ = ‖Log_M(N)‖_F, θ the principal angles between span(M)
        and span(N): the length of the geodesic of Eq. 2.65 (Edelman et al. 1998) with
        velocity Log_M(N) (Absil et al. 2004); on a stack, √(Σ over the factors), the
        product distance.

        The sines are the singular values of the residual (I − M Mᵀ) N and the cosines
        those of MᵀN (Björck & Golub 1973); with the sines descending and the cosines
        ascending, θⱼ = atan2(sin θⱼ, cos θⱼ), each angle to an absolute error of a few
        rounding units (an angle of 1e-12 keeps about four digits), where the arccos of the
        cosines alone returns 0 for the angles below about 1e-8.  Symmetric in M and N,
        invariant to M → MQ and N → NR for orthogonal Q and R.
        """
        self.check_pair(M, N, "N")
        xp = arrays.namespace(M, N)
        sines = xp.linalg.svdvals(N - M @ (M.mT @ N))
        cosines = xp.flip(xp.linalg.svdvals(M.mT @ N), axis=-1)
        return float(xp.linalg.vector_norm(xp.atan2(sines, cosines)))

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
