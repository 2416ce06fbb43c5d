"""The manifolds (``ldr.manifolds``): each class's operations against pymanopt's, the stacked
product against the tuple product, points given by a user, solvers on each manifold against
``eigh``, and a new manifold written as one class."""

import math

import autograd.numpy as anp
import numpy as np
import pymanopt.manifolds as pm
import pytest
import scipy.linalg

import ldr
from ldr.core import linalg
from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.manifolds import (
    Euclidean,
    Grassmann,
    Manifold,
    Product,
    Stiefel,
    from_declaration,
    orthonormalize,
    sin_largest_angle,
)

MANIFOLDS = [Stiefel(7, 3), Grassmann(7, 3), Euclidean(7, 3), Stiefel(6, 1),
             Stiefel(4, 2, k=3), Grassmann(4, 2, k=3), Euclidean(4, 2, k=3),
             Product(Stiefel(5, 2), Grassmann(4, 2), Euclidean(3, 1))]


def _id(m):
    return repr(m)


def is_product(m) -> bool:
    return isinstance(m, Product)


def flat(m, x) -> np.ndarray:
    """A point or tangent vector as one vector."""
    return np.concatenate([np.ravel(a) for a in m.split(x)])


def to_pymanopt(m, x):
    """pymanopt's layout of a point or vector: a list on a product."""
    return list(x) if is_product(m) else x


def twin(m, retraction: str = "polar"):
    """pymanopt's manifold with ``retraction`` where it has a choice (Stiefel)."""
    if is_product(m):
        return pm.Product([twin(f, retraction) for f in m.factors])
    if isinstance(m, Stiefel):
        d, r = m.shape[-2:]
        return pm.Stiefel(d, r, k=m.k, retraction=retraction)
    return m.pymanopt


@pytest.mark.parametrize("m", MANIFOLDS, ids=_id)
def test_operations_equal_pymanopts(m, rng):
    """Dimension, typical distance, projection, metric, Riemannian Hessian and both
    retractions equal pymanopt's operations on its equivalent manifold."""
    ref = m.pymanopt
    assert m.dim == ref.dim
    assert m.typical_dist == pytest.approx(ref.typical_dist, rel=1e-15)
    M = m.random_point(rng)
    assert m.feasibility(M) < 1e-14
    Z, G, H = (m.random_ambient(rng) for _ in range(3))
    P = m.project(M, Z)
    np.testing.assert_allclose(flat(m, P), flat(m, ref.projection(to_pymanopt(m, M),
                                                                  to_pymanopt(m, Z))),
                               atol=1e-14)
    U, V = m.random_tangent(M, rng), m.random_tangent(M, rng)
    assert m.norm(U) == pytest.approx(1.0, rel=1e-14)
    assert m.inner(U, V) == pytest.approx(
        ref.inner_product(to_pymanopt(m, M), to_pymanopt(m, U), to_pymanopt(m, V)),
        rel=1e-12, abs=1e-15)
    hess = ref.euclidean_to_riemannian_hessian(*(to_pymanopt(m, x) for x in (M, G, H, V)))
    np.testing.assert_allclose(flat(m, m.rhess(M, G, H, V)), flat(m, hess), atol=1e-13)
    np.testing.assert_allclose(flat(m, m.rhess(M, G, H, V, m.hess_shift(M, G))),
                               flat(m, hess), atol=1e-13)
    for method in ("polar", "qr"):
        W = m.lincomb(0.5, V)
        N = m.retract(M, W, method)
        want = twin(m, method).retraction(to_pymanopt(m, M), to_pymanopt(m, W))
        if method == "qr" and any(isinstance(f, Grassmann) for f in m.factors):
            # pymanopt retracts on Grassmann by the polar factor only: the same span
            for f, a, b in zip(m.factors, m.split(N), m.split(want)):
                if isinstance(f, Grassmann):
                    assert sin_largest_angle(a, b) < 1e-13
            continue
        np.testing.assert_allclose(flat(m, N), flat(m, want), atol=1e-13)
        assert m.feasibility(N) < 1e-13


@pytest.mark.parametrize("m", [Stiefel(7, 3), Grassmann(7, 3), Euclidean(7, 3)], ids=_id)
def test_projection_is_orthogonal_onto_the_tangent_space(m, rng):
    M = m.random_point(rng)
    Z = m.random_ambient(rng)
    P = m.project(M, Z)
    np.testing.assert_allclose(m.project(M, P), P, atol=1e-14)
    if isinstance(m, Stiefel):
        np.testing.assert_allclose(M.T @ P + P.T @ M, 0, atol=1e-14)
    if isinstance(m, Grassmann):
        np.testing.assert_allclose(M.T @ P, 0, atol=1e-14)
    assert abs(m.inner(Z - P, m.random_tangent(M, rng))) < 1e-12
    np.testing.assert_array_equal(m.rgrad(M, Z), P)
    N = m.retract(M, 0.3 * m.random_tangent(M, rng))
    np.testing.assert_allclose(m.transport(M, N, P), m.project(N, P), atol=1e-15)


@pytest.mark.parametrize("m", [Stiefel(9, 3), Grassmann(9, 3), Stiefel(5, 2, k=4)], ids=_id)
@pytest.mark.parametrize("method", ["polar", "qr"])
def test_retraction_stays_on_the_manifold_over_many_steps(m, method, rng):
    """‖MᵀM − I‖ stays at rounding level over 2000 unit steps, and R_M(tV) = M + tV + O(t²)."""
    M = m.random_point(rng)
    worst = 0.0
    for _ in range(2000):
        M = m.retract(M, m.random_tangent(M, rng), method)
        worst = max(worst, m.feasibility(M))
    assert worst < 1e-14 * math.sqrt(m.dim)
    V = m.random_tangent(M, rng)
    t = 1e-4
    assert np.linalg.norm(m.retract(M, t * V, method) - (M + t * V)) < 10 * t**2


@pytest.mark.parametrize("kind", [Stiefel, Grassmann, Euclidean])
def test_stacked_factors_equal_the_tuple_product(kind, rng):
    """Stiefel(d, r, k=k) is the product of k identical factors: every operation equals the
    same operation on the tuple product, factor by factor."""
    k, d, r = 5, 4, 2
    stacked = kind(d, r, k=k)
    product = Product(*(kind(d, r) for _ in range(k)))
    assert stacked.shape == (k, d, r) and product.shape == ((d, r),) * k
    assert stacked.dim == product.dim
    assert stacked.typical_dist == pytest.approx(product.typical_dist)
    assert stacked.transport_is_identity == product.transport_is_identity
    M = stacked.random_point(rng)
    Mt = tuple(M)
    Z, H, G = (rng.standard_normal((k, d, r)) for _ in range(3))
    V = stacked.project(M, rng.standard_normal((k, d, r)))
    Vt = product.project(Mt, tuple(V))

    def same(a, b, tol=1e-13):
        np.testing.assert_allclose(a, np.stack(b), atol=tol)

    same(stacked.project(M, Z), product.project(Mt, tuple(Z)))
    same(V, Vt)
    assert stacked.inner(V, Z) == pytest.approx(product.inner(Vt, tuple(Z)), rel=1e-13)
    same(stacked.rhess(M, G, H, V), product.rhess(Mt, tuple(G), tuple(H), Vt))
    same(stacked.apply(lambda a, b: a * b, V, Z), product.apply(lambda a, b: a * b, Vt,
                                                                  tuple(Z)))
    for method in ("polar", "qr"):
        N = stacked.retract(M, 0.3 * V, method)
        same(N, product.retract(Mt, tuple(0.3 * V), method))
        assert stacked.change(M, N) == pytest.approx(product.change(Mt, tuple(N)), rel=1e-12)
        assert stacked.feasibility(N) == pytest.approx(product.feasibility(tuple(N)),
                                                       abs=1e-15)
    # change reports the largest factor's move, not an average
    N = M.copy()
    N[3] = stacked.retract(M, 0.5 * V)[3]
    assert stacked.change(M, N) == pytest.approx(product.change(Mt, tuple(N)), rel=1e-12)
    assert stacked.change(M, N) > 0
    n, to_vector, to_coords = stacked.tangent_basis(M)
    assert n == stacked.dim
    c = rng.standard_normal(n)
    np.testing.assert_allclose(to_coords(to_vector(c)), c, atol=1e-12)
    np.testing.assert_allclose(to_vector(c), np.stack(product.tangent_basis(Mt)[1](c)),
                               atol=1e-12)


def test_change_measures(rng):
    """Grassmann: the largest principal-angle sine (a rotation inside the span is no move);
    Stiefel: ‖N − M‖₂; Euclidean: ‖N − M‖_F relative to the larger of ‖M‖_F, ‖N‖_F."""
    M, N = (orthonormalize(rng.standard_normal((8, 3))) for _ in range(2))
    Q = orthonormalize(rng.standard_normal((3, 3)))
    assert Grassmann(8, 3).change(M, M @ Q) < 1e-14
    assert Grassmann(8, 3).change(M, N) == pytest.approx(
        np.sin(np.max(scipy.linalg.subspace_angles(M, N))), rel=1e-10)
    assert Stiefel(8, 3).change(M, N) == pytest.approx(np.linalg.norm(N - M, 2), rel=1e-12)
    A, B = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    assert Euclidean(8, 3).change(A, B) == pytest.approx(
        np.linalg.norm(B - A) / max(np.linalg.norm(A), np.linalg.norm(B)), rel=1e-14)
    assert Euclidean(8, 3).change(1e-90 * A, 1e-90 * B) == pytest.approx(
        Euclidean(8, 3).change(A, B), rel=1e-12)


def test_sine_of_largest_angle_matches_scipy_and_resolves_tiny_angles(rng):
    M = orthonormalize(rng.standard_normal((10, 3)))
    N = orthonormalize(rng.standard_normal((10, 3)))
    expected = np.sin(np.max(scipy.linalg.subspace_angles(M, N)))
    assert sin_largest_angle(M, N) == pytest.approx(expected, rel=1e-10)
    # a 1e-12 rotation is resolved (arccos of cosines would return 0 or ~1e-8)
    geom = Grassmann(10, 3)
    V = geom.random_tangent(M, rng)
    assert sin_largest_angle(M, geom.retract(M, 1e-12 * V)) == pytest.approx(1e-12, rel=1e-3)
    Q = orthonormalize(rng.standard_normal((3, 3)))
    assert sin_largest_angle(M, M @ Q) < 1e-14


@pytest.mark.parametrize("m", MANIFOLDS + [Product(Stiefel(5, 2, k=2), Euclidean(2, 2))],
                         ids=_id)
def test_tangent_basis_is_orthonormal_and_spans(m, rng):
    M = m.random_point(rng)
    dim, to_vector, to_coords = m.tangent_basis(M)
    assert dim == m.dim
    B = np.column_stack([flat(m, to_vector(e)) for e in np.eye(dim)])
    np.testing.assert_allclose(B.T @ B, np.eye(dim), atol=1e-12)
    np.testing.assert_allclose(flat(m, m.project(M, to_vector(np.arange(dim) / dim))),
                               np.arange(dim) / dim @ B.T, atol=1e-12)  # tangent vectors
    V = m.random_tangent(M, rng)
    np.testing.assert_allclose(flat(m, to_vector(to_coords(V))), flat(m, V), atol=1e-12)


def test_validate_point_errors_name_the_argument(rng):
    geom = Stiefel(5, 2)
    with pytest.raises(ParameterError, match="orthonormal.*pass ldr.manifolds") as err:
        geom.validate_point(rng.standard_normal((5, 2)))
    assert err.value.param == "M0"
    with pytest.raises(ParameterError, match=r"shape \(5, 2\)") as err:
        geom.validate_point(np.eye(5)[:, :3], "start")
    assert err.value.param == "start"
    bad = np.eye(5)[:, :2].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ParameterError, match="NaN"):
        geom.validate_point(bad)
    with pytest.raises(ParameterError, match="numeric"):
        geom.validate_point("abc")
    with pytest.raises(ParameterError, match="linearly dependent") as err:
        geom.validate_point(np.ones((5, 2)), orthonormalize=True)
    A = rng.standard_normal((5, 2))
    M = geom.validate_point(A, orthonormalize=True)
    np.testing.assert_allclose(M, linalg.polar(A), atol=1e-15)
    assert sin_largest_angle(M, orthonormalize(A)) < 1e-14
    # a product names the factor; a tuple of the wrong length is refused
    prod = Product(Stiefel(5, 2), Euclidean(3, 1))
    with pytest.raises(ParameterError, match="tuple of 2 arrays"):
        prod.validate_point(np.eye(5)[:, :2])
    with pytest.raises(ParameterError, match="orthonormal"):
        prod.validate_point((A, np.zeros((3, 1))))
    with pytest.raises(ParameterError, match="linearly dependent") as err:
        prod.validate_point((np.ones((5, 2)), np.zeros((3, 1))), orthonormalize=True)
    assert err.value.param == "M0[0]"
    out = prod.validate_point([A, [[1.0], [2.0], [3.0]]], orthonormalize=True)
    assert isinstance(out, tuple) and prod.feasibility(out) < 1e-14
    np.testing.assert_array_equal(out[1], [[1.0], [2.0], [3.0]])
    # stacked factors are checked as one array (k, d, r)
    stack = Grassmann(4, 2, k=3)
    with pytest.raises(ParameterError, match=r"shape \(3, 4, 2\)"):
        stack.validate_point(np.eye(4)[:, :2])
    assert stack.feasibility(stack.validate_point(rng.standard_normal((3, 4, 2)),
                                                  orthonormalize=True)) < 1e-14


def test_declarations_build_the_classes():
    assert from_declaration("stiefel", (5, 2)) == Stiefel(5, 2)
    assert from_declaration("grassmann", [5, 2]) == Grassmann(5, 2)
    assert from_declaration("euclidean", (3, 5, 2)) == Euclidean(5, 2, k=3)
    assert from_declaration(("stiefel", "euclidean"), ((5, 2), (5, 1))) == \
        Product(Stiefel(5, 2), Euclidean(5, 1))
    assert from_declaration(("stiefel",), ((5, 2),)) != Stiefel(5, 2)
    assert Stiefel(5, 2) != Grassmann(5, 2) and hash(Stiefel(5, 2)) == hash(Stiefel(5, 2))
    given = Grassmann(6, 2)
    assert from_declaration(given) is given and from_declaration(given, (6, 2)) is given
    with pytest.raises(ParameterError, match="shape"):
        from_declaration(given, (6, 3))
    with pytest.raises(ParameterError, match="unknown kind"):
        from_declaration("sphere", (3, 1))
    with pytest.raises(ParameterError, match="r < d"):
        from_declaration("grassmann", (3, 3))
    with pytest.raises(ParameterError, match="1 <= r <= d"):
        from_declaration("stiefel", (4, 2, 3))
    with pytest.raises(ParameterError, match="positive integer") as err:
        from_declaration("stiefel", (0, 3, 1))
    assert err.value.param == "k"
    with pytest.raises(ParameterError, match=r"\(k, d, r\)"):
        from_declaration("stiefel", (2, 3, 4, 5))
    with pytest.raises(ParameterError, match=r"declare \(d, r\)"):
        from_declaration("stiefel", (1, 3, 2))
    with pytest.raises(ParameterError, match="one \\(d, r\\) per factor"):
        from_declaration(("stiefel", "stiefel"), (3, 1))
    with pytest.raises(ParameterError, match="not itself a product"):
        Product(Stiefel(3, 1), Product(Stiefel(3, 1)))


def test_the_properties_solvers_ask():
    assert Euclidean(4, 2).transport_is_identity
    assert Product(Euclidean(4, 2), Euclidean(3, 1, k=2)).transport_is_identity
    assert not Product(Euclidean(4, 2), Stiefel(3, 1)).transport_is_identity
    assert not Stiefel(4, 2).transport_is_identity
    assert Stiefel(4, 2).orthonormal_matrix and Grassmann(4, 2).orthonormal_matrix
    assert not any(m.orthonormal_matrix for m in (Stiefel(4, 2, k=2), Euclidean(4, 2),
                                                  Product(Stiefel(4, 2))))
    assert str(Product(Grassmann(13, 2), Euclidean(8, 2), Stiefel(3, 1, k=24))) == \
        "Grassmann(13, 2) × R^{8×2} × Stiefel(3, 1)^24"


def _pca_pair(rng):
    """Two covariances with clear gaps and the top-2 eigenvectors of each."""
    out = []
    for d in (7, 5):
        Q = orthonormalize(rng.standard_normal((d, d)))
        C = Q @ np.diag(np.linspace(3.0, 0.5, d)) @ Q.T
        out.append((C, np.linalg.eigh(C)[1][:, ::-1][:, :2]))
    return out


@pytest.mark.parametrize("solver", ["trust-region", "gradient", "conjugate-gradient", "lbfgs"])
@pytest.mark.parametrize("manifold", ["stiefel", "grassmann"])
def test_pca_converges_to_the_eigh_answer(manifold, solver, pca_data):
    """PCA, −tr(MᵀCM), on Stiefel and on Grassmann: every solver ends at the span of the top
    eigenvectors of C, at the cost −(λ₁ + λ₂)."""
    obj = ldr.objectives.PCA(pca_data, 2, manifold=manifold)
    res = ldr.solve(obj, solver, start="random", random_state=1)
    assert res.converged
    w, U = np.linalg.eigh(obj.C)
    assert sin_largest_angle(res.M, U[:, -2:]) < 1e-6
    assert res.cost == pytest.approx(-(w[-1] + w[-2]), rel=1e-10)


@pytest.mark.parametrize("solver", ["trust-region", "lbfgs"])
def test_solvers_on_a_product_and_on_a_euclidean_factor(solver, rng):
    """A sum of two PCA costs on Stiefel × Grassmann ends at each factor's top eigenvectors;
    a least-squares cost ½‖AM − B‖² on R^{6×2} ends at the normal equations' solution."""
    (C1, U1), (C2, U2) = _pca_pair(rng)
    pair = ldr.objective(lambda M: -anp.sum(M[0] * (C1 @ M[0])) - anp.sum(M[1] * (C2 @ M[1])),
                         shape=((7, 2), (5, 2)), manifold=("stiefel", "grassmann"))
    res = ldr.solve(pair, solver, start="random")
    assert res.converged and isinstance(res.M, tuple)
    assert sin_largest_angle(res.M[0], U1) < 1e-6 and sin_largest_angle(res.M[1], U2) < 1e-6
    A, B = rng.standard_normal((10, 6)), rng.standard_normal((10, 2))
    squares = ldr.objective(lambda M: 0.5 * anp.sum((A @ M - B) ** 2), shape=(6, 2),
                            manifold="euclidean")
    res = ldr.solve(squares, solver, start="random", tol=1e-9)  # both reach it: a quadratic
    assert res.converged
    np.testing.assert_allclose(res.M, np.linalg.solve(A.T @ A, A.T @ B), atol=1e-6)


def test_solvers_on_stacked_factors_follow_the_tuple_product(rng):
    """Rank-k correlation approximation (pymanopt's example): n unit vectors in R^k, the
    columns of X, minimize ¼‖XᵀX − A‖²_F — on Stiefel(k, 1)^n as one (n, k, 1) stack and as a
    tuple of n factors.  The same start gives the same iterates, so the same answer."""
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
    M0 = Stiefel(k, 1, k=n).random_point(rng)
    for solver in ("trust-region", "gradient"):
        rb = ldr.solve(batched, solver, start=M0)
        rp = ldr.solve(product, solver, start=tuple(M0))
        assert rb.converged and rp.converged
        assert rb.n_iter == rp.n_iter
        assert rb.cost == pytest.approx(rp.cost, rel=1e-10)
        np.testing.assert_allclose(rb.M, np.stack(rp.M), atol=1e-8)
        assert np.allclose(np.linalg.norm(rb.M, axis=1), 1.0)
    # a second-order certificate on the stack (block-diagonal tangent basis)
    res = ldr.solve(batched, "trust-region", start=M0, certify=True)
    assert res.certificate.grad_norm < 1e-6


@pytest.mark.parametrize("m", [Stiefel(6, 2), Grassmann(6, 2), Euclidean(6, 2),
                               Stiefel(3, 1, k=4),
                               Product(Stiefel(5, 2), Grassmann(4, 1))], ids=_id)
def test_hessian_operator_equals_the_per_product_hessian(m, rng):
    """Problem.hess_operator (the point's work done once: hess_shift, autograd's gradient
    traced once by Objective.ehvp_at) gives the same Riemannian Hessian as Problem.rhess, and
    that equals pymanopt's conversion."""
    A = {}

    def cost(M):
        total = 0.0
        for i, a in enumerate(m.split(M)):
            if i not in A:
                A[i] = rng.standard_normal((a.size, a.size))
            v = anp.reshape(a, (-1,))
            total = total + anp.sum(v * anp.dot(A[i], v)) + anp.sum(anp.sin(v) ** 3)
        return total

    cost(m.random_point(rng))  # fix the matrices
    problem = Problem(ldr.objective(cost, shape=m.shape, manifold=m))
    assert problem.manifold is m
    M = m.random_point(rng)
    G = problem.egrad(M)
    hess = problem.hess_operator(M, G)
    for _ in range(3):
        V = m.random_tangent(M, rng)
        H1, H2 = hess(V), problem.rhess(M, G, V)
        np.testing.assert_allclose(flat(m, H1), flat(m, H2), atol=1e-12)
        ref = m.pymanopt.euclidean_to_riemannian_hessian(
            *(to_pymanopt(m, x) for x in (M, G, problem.ehvp(M, V), V)))
        np.testing.assert_allclose(flat(m, H1), flat(m, ref), atol=1e-12)
        t = 1e-6  # the Euclidean part against a difference of gradients
        fd = (flat(m, problem.egrad(m.lincomb(1.0, M, t, V)))
              - flat(m, problem.egrad(m.lincomb(1.0, M, -t, V)))) / (2 * t)
        np.testing.assert_allclose(flat(m, problem.objective.ehvp_at(M)(V)), fd, rtol=1e-6,
                                   atol=1e-6)
    assert problem.counts["hvp"] == 3 * 2 + 3  # hess (3) + rhess (3) + ehvp for pymanopt (3)


def test_linalg_lapack_route_equals_the_array_api_route(rng):
    """ldr.core.linalg's direct LAPACK calls (one NumPy float64 matrix) give what the array-API
    code gives (array_api_strict, and NumPy stacks), to rounding."""
    xp = pytest.importorskip("array_api_strict")
    for shape in [(9, 3), (5, 5), (7, 1)]:
        A = rng.standard_normal(shape)
        Q, R = np.linalg.qr(A)
        np.testing.assert_array_equal(linalg.qr(A), Q * np.sign(np.diag(R)))
        U, _, Vt = np.linalg.svd(A, full_matrices=False)
        np.testing.assert_allclose(linalg.polar(A), U @ Vt, atol=1e-14)
        S = A.T @ A
        assert linalg.top_eigenvalue(S) == pytest.approx(np.linalg.eigvalsh(S)[-1], rel=1e-13)
        for fn in (linalg.qr, linalg.polar):
            np.testing.assert_allclose(np.asarray(fn(xp.asarray(A))), fn(A), atol=1e-13)
        assert linalg.top_eigenvalue(xp.asarray(S)) == pytest.approx(
            linalg.top_eigenvalue(S), rel=1e-13)
    stack = rng.standard_normal((4, 6, 2))
    for fn in (linalg.qr, linalg.polar):
        np.testing.assert_allclose(fn(stack), np.stack([fn(a) for a in stack]), atol=1e-14)
    assert linalg.spectral_norm(stack) == pytest.approx(
        max(np.linalg.norm(a, 2) for a in stack), rel=1e-12)


@pytest.mark.parametrize("solver", ["ism", "scf"])
@pytest.mark.parametrize("shape,manifold", [((3, 4, 1), "stiefel"), ((4, 1), "euclidean")])
def test_spectral_solvers_refuse_what_is_not_one_orthonormal_matrix(solver, shape, manifold):
    C = np.diag(np.arange(1.0, 5.0))
    obj = ldr.objective(lambda M: -anp.sum(M * anp.matmul(C, M)), shape=shape,
                        manifold=manifold, phi=lambda M: -C, pencil=lambda M: (C, np.eye(4)),
                        pencil0=lambda: (C, np.eye(4)))
    with pytest.raises(ValueError, match=f"solver '{solver}' needs a Stiefel or Grassmann"):
        ldr.solve(obj, solver, start="random")


class Sphere(Manifold):
    """The unit sphere of d×r matrices in the Frobenius norm (pymanopt's ``Sphere``), written
    as one class: what a new manifold takes."""

    def __init__(self, d: int, r: int):
        self.shape, self.dim, self.typical_dist = (d, r), d * r - 1, math.pi

    def __repr__(self):
        return f"Sphere{self.shape}"

    @property
    def pymanopt(self):
        return pm.Sphere(*self.shape)

    def project(self, M, Z):
        return Z - np.vdot(M, Z) * M

    def hess_shift(self, M, G):
        return np.vdot(M, G)

    def rhess(self, M, G, H, V, S=None):
        return self.project(M, H) - (self.hess_shift(M, G) if S is None else S) * V

    def retract(self, M, V, method="polar"):
        return (M + V) / np.linalg.norm(M + V)

    def random_point(self, rng):
        A = rng.standard_normal(self.shape)
        return A / np.linalg.norm(A)

    def change(self, M, N):
        return float(np.linalg.norm(N - M))

    def feasibility(self, M):
        return abs(float(np.linalg.norm(M)) - 1.0)

    def matrix_tangent_basis(self, M):
        Q, _ = np.linalg.qr(np.column_stack([M.ravel(), np.eye(M.size)]))
        B = Q[:, 1:]
        return M.size - 1, lambda c: (B @ c).reshape(M.shape), lambda V: B.T @ V.ravel()


@pytest.mark.parametrize("solver", ["trust-region", "lbfgs"])
def test_a_new_manifold_is_one_class(solver, rng):
    """min tr(MᵀAM) over the unit sphere of 4×2 matrices is λ_min(A) (Rayleigh quotient of
    I ⊗ A): a Sphere declared by the objective converges there, certified a local min, and
    its Hessian conversion is pymanopt's."""
    sphere = Sphere(4, 2)
    A = rng.standard_normal((4, 4))
    A = A + A.T
    obj = ldr.objective(lambda M: anp.sum(M * (A @ M)), shape=None, manifold=sphere)
    res = ldr.solve(obj, solver, start="random", certify=True)
    assert res.converged
    assert res.cost == pytest.approx(np.linalg.eigvalsh(A)[0], rel=1e-8)
    assert res.certificate.is_local_min
    M, V = sphere.random_point(rng), sphere.random_tangent(sphere.random_point(rng), rng)
    V = sphere.project(M, V)
    G, H = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    np.testing.assert_allclose(sphere.rhess(M, G, H, V),
                               sphere.pymanopt.euclidean_to_riemannian_hessian(M, G, H, V),
                               atol=1e-13)


def test_check_rotates_each_stacked_factor(rng):
    """ldr.check's invariance test acts by one orthogonal R per factor of a stack: the
    correlation cost of unit vectors, ¼‖YYᵀ − A‖², is invariant to each vector's sign."""
    A = rng.standard_normal((5, 5))
    A = A + A.T
    obj = ldr.objective(lambda M: 0.25 * anp.sum((M[:, :, 0] @ M[:, :, 0].T - A) ** 2),
                        shape=(5, 3, 1), manifold="stiefel")
    report = ldr.check(obj)
    assert report
    assert [item.error for item in report.items if item.name == "invariance"][0] < 1e-12
