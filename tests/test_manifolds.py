import numpy as np
import pytest
import scipy.linalg

from ldr.manifolds import Geometry, orthonormalize, sin_largest_angle


@pytest.mark.parametrize("kind", ["stiefel", "grassmann"])
@pytest.mark.parametrize("method", ["polar", "qr"])
def test_retraction_stays_on_manifold_and_is_first_order(kind, method, rng):
    geom = Geometry(kind, (9, 3))
    M = geom.random_point(rng)
    V = geom.random_tangent(M, rng)
    for t in [1.0, 1e-3]:
        N = geom.retract(M, t * V, method)
        assert geom.feasibility(N) < 1e-13
    # R_M(tV) = M + tV + O(t^2)
    t = 1e-4
    err = np.linalg.norm(geom.retract(M, t * V, method) - (M + t * V))
    assert err < 10 * t**2


@pytest.mark.parametrize("kind", ["stiefel", "grassmann", "euclidean"])
def test_projection_is_tangent_and_idempotent(kind, rng):
    geom = Geometry(kind, (7, 3))
    M = geom.random_point(rng)
    Z = rng.standard_normal((7, 3))
    P = geom.project(M, Z)
    np.testing.assert_allclose(geom.project(M, P), P, atol=1e-14)
    if kind == "stiefel":
        np.testing.assert_allclose(M.T @ P + P.T @ M, 0, atol=1e-14)
    if kind == "grassmann":
        np.testing.assert_allclose(M.T @ P, 0, atol=1e-14)
    # orthogonal projection: residual orthogonal to the tangent space
    W = geom.random_tangent(M, rng)
    assert abs(np.vdot(Z - P, W)) < 1e-12


def test_sine_of_largest_angle_matches_scipy_and_resolves_tiny_angles(rng):
    M = orthonormalize(rng.standard_normal((10, 3)))
    N = orthonormalize(rng.standard_normal((10, 3)))
    expected = np.sin(np.max(scipy.linalg.subspace_angles(M, N)))
    assert sin_largest_angle(M, N) == pytest.approx(expected, rel=1e-10)
    # a 1e-12 rotation is resolved (arccos of cosines would return 0 or ~1e-8)
    geom = Geometry("grassmann", (10, 3))
    V = geom.random_tangent(M, rng)
    N = geom.retract(M, 1e-12 * V)
    assert sin_largest_angle(M, N) == pytest.approx(1e-12, rel=1e-3)
    # invariant to a change of basis
    Q = orthonormalize(rng.standard_normal((3, 3)))
    assert sin_largest_angle(M, M @ Q) < 1e-14


@pytest.mark.parametrize("spec,shape", [
    ("stiefel", (6, 3)), ("grassmann", (6, 3)), ("euclidean", (4, 2)),
    (("stiefel", "grassmann"), ((5, 2), (4, 2))),
])
def test_tangent_basis_is_orthonormal_and_spans(spec, shape, rng):
    geom = Geometry(spec, shape)
    M = geom.random_point(rng)
    dim, to_vector, to_coords = geom.tangent_basis(M)
    assert dim == geom.dim
    B = np.column_stack([
        np.concatenate([np.ravel(v) for v in (to_vector(e) if geom.is_product
                                              else [to_vector(e)])])
        for e in np.eye(dim)])
    np.testing.assert_allclose(B.T @ B, np.eye(dim), atol=1e-12)
    V = geom.random_tangent(M, rng)
    back = to_vector(to_coords(V))
    flat = (lambda x: np.concatenate([np.ravel(a) for a in x])) if geom.is_product else np.ravel
    np.testing.assert_allclose(flat(back), flat(V), atol=1e-12)


def test_bad_specs_raise():
    with pytest.raises(ValueError, match="unknown kind"):
        Geometry("sphere", (3, 1))
    with pytest.raises(ValueError, match="r < d"):
        Geometry("grassmann", (3, 3))
    with pytest.raises(ValueError, match="shape"):
        Geometry(("stiefel", "stiefel"), (3, 1))


def test_validate_point_rejects_non_orthonormal(rng):
    geom = Geometry("stiefel", (5, 2))
    with pytest.raises(ValueError, match="orthonormal"):
        geom.validate_point(rng.standard_normal((5, 2)))
    with pytest.raises(ValueError, match="shape"):
        geom.validate_point(np.eye(5)[:, :3])
    bad = np.eye(5)[:, :2].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        geom.validate_point(bad)


@pytest.mark.parametrize("kind", ["stiefel", "grassmann", "euclidean"])
def test_batched_factors_match_the_tuple_product(kind, rng):
    """Shape (k, d, r) is the product of k identical factors: every operation equals the
    same operation on the tuple product, factor by factor."""
    k, d, r = 5, 4, 2
    batched = Geometry(kind, (k, d, r))
    product = Geometry((kind,) * k, ((d, r),) * k)
    assert batched.batched and not product.batched
    assert batched.dim == product.dim
    assert batched.typical_dist == pytest.approx(product.typical_dist)
    M = batched.random_point(rng)
    Mt = tuple(M)
    assert batched.feasibility(M) < 1e-14
    Z, H, G = (rng.standard_normal((k, d, r)) for _ in range(3))
    V = batched.project(M, rng.standard_normal((k, d, r)))
    Vt = product.project(Mt, tuple(V))

    def same(a, b, tol=1e-13):
        np.testing.assert_allclose(a, np.stack(b), atol=tol)

    same(batched.project(M, Z), product.project(Mt, tuple(Z)))
    same(V, Vt)
    assert batched.inner(V, Z) == pytest.approx(product.inner(Vt, tuple(Z)), rel=1e-13)
    same(batched.rhess(M, G, H, V), product.rhess(Mt, tuple(G), tuple(H), Vt))
    for method in ("polar", "qr"):
        N = batched.retract(M, 0.3 * V, method)
        same(N, product.retract(Mt, tuple(0.3 * V), method))
        assert batched.change(M, N) == pytest.approx(product.change(Mt, tuple(N)), rel=1e-12)
        assert batched.feasibility(N) == pytest.approx(product.feasibility(tuple(N)), abs=1e-15)
    # change reports the largest factor's move, not an average
    N = M.copy()
    N[3] = batched.retract(M, 0.5 * V)[3]
    assert batched.change(M, N) == pytest.approx(product.change(Mt, tuple(N)), rel=1e-12)
    assert batched.change(M, N) > 0
    # the Riemannian Hessian is pymanopt's (its k-fold manifolds take the same stacks)
    if kind != "euclidean":
        ref = batched.pymanopt.euclidean_to_riemannian_hessian(M, G, H, V)
        same(batched.rhess(M, G, H, V), tuple(ref), tol=1e-12)
    n, to_vector, to_coords = batched.tangent_basis(M)
    assert n == batched.dim
    c = rng.standard_normal(n)
    np.testing.assert_allclose(to_coords(to_vector(c)), c, atol=1e-12)


def test_batched_shape_errors():
    with pytest.raises(ValueError, match=r"\(k, d, r\)"):
        Geometry("stiefel", (2, 3, 4, 5))
    with pytest.raises(ValueError, match="k >= 1"):
        Geometry("stiefel", (0, 3, 1))
    with pytest.raises(ValueError, match="1 <= r <= d"):
        Geometry("stiefel", (4, 2, 3))


def test_solvers_on_batched_factors_follow_the_tuple_product(rng):
    """Rank-k correlation approximation (pymanopt's example): n unit vectors in R^k, the
    columns of X, minimize ¼‖XᵀX − A‖²_F — on Stiefel(k, 1)^n as one (n, k, 1) stack and as a
    tuple of n factors.  The same start gives the same iterates, so the same answer."""
    import autograd.numpy as anp

    import ldr

    n, k = 8, 3
    A = rng.standard_normal((n, n))
    A = 0.5 * (A + A.T)

    def stacked(M):
        Y = M[:, :, 0]                      # n × k, row i is the i-th unit vector
        return 0.25 * anp.sum((Y @ Y.T - A) ** 2)

    def tupled(M):
        return stacked(anp.stack(M))

    batched = ldr.objective(stacked, shape=(n, k, 1), manifold="stiefel")
    product = ldr.objective(tupled, shape=((k, 1),) * n, manifold=("stiefel",) * n)
    M0 = Geometry("stiefel", (n, k, 1)).random_point(rng)
    for solver in ("trust-region", "gradient"):
        rb = ldr.solve(batched, solver, M0=M0)
        rp = ldr.solve(product, solver, M0=tuple(M0))
        assert rb.converged and rp.converged
        assert rb.n_iter == rp.n_iter
        assert rb.cost == pytest.approx(rp.cost, rel=1e-10)
        np.testing.assert_allclose(rb.M, np.stack(rp.M), atol=1e-8)
        assert np.allclose(np.linalg.norm(rb.M, axis=1), 1.0)
    # a second-order certificate on the batch (block-diagonal tangent basis)
    res = ldr.solve(batched, "trust-region", M0=M0, certify=True)
    assert res.certificate.grad_norm < 1e-6


@pytest.mark.parametrize("spec,shape", [
    ("stiefel", (6, 2)), ("grassmann", (6, 2)), ("euclidean", (6, 2)), ("stiefel", (4, 3, 1)),
    (("stiefel", "grassmann"), ((5, 2), (4, 1))),
])
def test_hessian_operator_equals_the_per_product_hessian(spec, shape, rng):
    """Problem.hess_operator (the point's work done once: hess_shift, autograd's gradient
    traced once by Objective.ehvp_at) gives the same Riemannian Hessian as Problem.rhess, and
    that equals pymanopt's conversion."""
    import autograd.numpy as anp

    import ldr
    from ldr.problem import Problem

    geom = Geometry(spec, shape)
    A = {}

    def cost(M):
        parts = [M[i] for i in range(len(geom.parts))] if geom.is_product else [M]
        total = 0.0
        for i, m in enumerate(parts):
            if i not in A:
                A[i] = rng.standard_normal((m.size, m.size))
            v = anp.reshape(m, (-1,))
            total = total + anp.sum(v * anp.dot(A[i], v)) + anp.sum(anp.sin(v) ** 3)
        return total

    cost(geom.random_point(rng))  # fix the matrices
    problem = Problem(ldr.objective(cost, shape=shape, manifold=spec))
    M = geom.random_point(rng)
    G = problem.egrad(M)
    hess = problem.hess_operator(M, G)
    for _ in range(3):
        V = geom.random_tangent(M, rng)
        H1, H2 = hess(V), problem.rhess(M, G, V)
        flat = (lambda x: np.concatenate([np.ravel(a) for a in x])) if geom.is_product \
            else np.ravel
        np.testing.assert_allclose(flat(H1), flat(H2), atol=1e-12)
        ref = geom.pymanopt.euclidean_to_riemannian_hessian(
            list(M) if geom.is_product else M, list(G) if geom.is_product else G,
            list(problem.ehvp(M, V)) if geom.is_product else problem.ehvp(M, V),
            list(V) if geom.is_product else V)
        np.testing.assert_allclose(flat(H1), flat(ref), atol=1e-12)
        # the Euclidean part against a difference of gradients
        t = 1e-6
        Mp = tuple(m + t * v for m, v in zip(M, V)) if geom.is_product else M + t * V
        Mm = tuple(m - t * v for m, v in zip(M, V)) if geom.is_product else M - t * V
        fd = (flat(problem.egrad(Mp)) - flat(problem.egrad(Mm))) / (2 * t)
        np.testing.assert_allclose(flat(problem.objective.ehvp_at(M)(V)), fd, rtol=1e-6,
                                   atol=1e-6)
    assert problem.counts["hvp"] == 3 * 2 + 3  # hess (3) + rhess (3) + ehvp for pymanopt (3)


def test_qr_by_lapack_equals_numpy(rng):
    from ldr.manifolds import _qr

    for shape in [(9, 3), (5, 5), (7, 1)]:
        A = rng.standard_normal(shape)
        Q, R = np.linalg.qr(A)
        s = np.sign(np.diag(R))
        np.testing.assert_array_equal(_qr(A), Q * s)
    A = rng.standard_normal((4, 6, 2))
    Q = _qr(A)
    for i in range(4):
        Qi, Ri = np.linalg.qr(A[i])
        np.testing.assert_allclose(Q[i], Qi * np.sign(np.diag(Ri)), atol=1e-14)


@pytest.mark.parametrize("solver", ["ism", "scf"])
def test_spectral_solvers_refuse_batched_factors(solver):
    import autograd.numpy as anp

    import ldr

    C = np.diag(np.arange(1.0, 5.0))
    obj = ldr.objective(lambda M: -anp.sum(M * anp.matmul(C, M)), shape=(3, 4, 1),
                        manifold="stiefel", phi=lambda M: -C, pencil=lambda M: (C, np.eye(4)),
                        pencil0=lambda: (C, np.eye(4)))
    with pytest.raises(ValueError, match=f"solver '{solver}' needs a Stiefel or Grassmann"):
        ldr.solve(obj, solver, M0="random")
