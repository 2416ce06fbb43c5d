import numpy as np
import pytest

import ldr
from ldr.objectives import LDA, PCA


@pytest.mark.parametrize("manifold", ["grassmann", "stiefel"])
def test_hessian_is_psd_at_pca_optimum(pca_data, manifold):
    obj = PCA(pca_data, 3, manifold=manifold)
    cert = ldr.certificate(obj, obj.heuristic())
    assert cert.psd and cert.is_local_min
    lam = np.linalg.eigvalsh(obj.C)[::-1]
    if manifold == "grassmann":
        # exact spectrum on Grassmann: 2(λ_i − λ_j), i ≤ r < j; smallest = 2(λ_r − λ_{r+1})
        assert cert.hess_min == pytest.approx(2 * (lam[2] - lam[3]), rel=1e-10)
        assert cert.hess_max == pytest.approx(2 * (lam[0] - lam[-1]), rel=1e-10)
    else:
        # the cost is invariant to rotations within the subspace: zero vertical curvature
        assert abs(cert.hess_min) < 1e-10 * cert.hess_max


def test_saddle_point_is_not_certified(pca_data):
    obj = PCA(pca_data, 3)
    _, V = np.linalg.eigh(obj.C)
    saddle = V[:, [-1, -2, -4]]  # skips the third eigenvector: a critical point, not a minimum
    cert = ldr.certificate(obj, saddle)
    assert cert.grad_norm < 1e-10
    assert not cert.psd and not cert.is_local_min
    lam = np.linalg.eigvalsh(obj.C)[::-1]
    assert cert.hess_min == pytest.approx(2 * (lam[3] - lam[2]), rel=1e-8)
    assert "NOT certified" in str(cert)


def test_lanczos_agrees_with_dense(lda_data):
    obj = LDA(*lda_data, 2)
    res = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-10)
    dense = ldr.certificate(obj, res.M)
    lanczos = ldr.certificate(obj, res.M, dense_max=0)
    assert "Lanczos" in lanczos.method and "dense" in dense.method
    assert lanczos.hess_min == pytest.approx(dense.hess_min, rel=1e-6)
    assert lanczos.hess_max == pytest.approx(dense.hess_max, rel=1e-6)
    assert dense.is_local_min


def test_quotient_of_traces_at_1e_minus_90_over_1e90_is_certified_global():
    # soak counterexample: A at 1e-90 and B at 1e90 — the gradient (≈1e-195) squared underflowed,
    # its norm read 0 and the run "converged" at a point 38% below the optimum; the norm is now
    # computed from the gradient scaled by its largest entry
    from ldr.objectives import QuotientOfTraces

    A = np.array([[1.6012914993843554e-90, 7.887048872494539e-91, -5.2294781578007776e-92],
                  [7.887048872494539e-91, 3.8847105565122524e-91, -2.575742756648297e-92],
                  [-5.2294781578007776e-92, -2.575742756648297e-92, 1.7078365690088047e-93]])
    B = np.array([[7.0069319837090595e+90, 2.215705290856668e+90, -1.0250041559597817e+90],
                  [2.215705290856668e+90, 9.334791081044156e+89, -8.28165336065813e+89],
                  [-1.0250041559597817e+90, -8.28165336065813e+89, 1.2737949835205173e+90]])
    tiny = ldr.solve(QuotientOfTraces(A, B, 2), max_iter=200, certify=True)
    unit = ldr.solve(QuotientOfTraces(A * 1e90, B / 1e90, 2), max_iter=200, certify=True)
    assert tiny.converged and tiny.certificate.global_optimum
    assert tiny.cost * 1e180 == pytest.approx(unit.cost, rel=1e-9)
    assert ldr.manifolds.sin_largest_angle(tiny.M, unit.M) < 1e-6
    geom = ldr.manifolds.Geometry("stiefel", (3, 2))
    assert geom.norm(np.full((3, 2), 1e-180)) == pytest.approx(np.sqrt(6) * 1e-180, rel=1e-12)
    assert geom.norm(np.full((3, 2), 1e180)) == pytest.approx(np.sqrt(6) * 1e180, rel=1e-12)
