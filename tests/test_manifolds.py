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
