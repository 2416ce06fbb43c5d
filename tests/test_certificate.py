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
    res = ldr.solve(obj, "trust-region", M0="heuristic", gtol=1e-10)
    dense = ldr.certificate(obj, res.M)
    lanczos = ldr.certificate(obj, res.M, dense_max=0)
    assert "Lanczos" in lanczos.method and "dense" in dense.method
    assert lanczos.hess_min == pytest.approx(dense.hess_min, rel=1e-6)
    assert lanczos.hess_max == pytest.approx(dense.hess_max, rel=1e-6)
    assert dense.is_local_min
