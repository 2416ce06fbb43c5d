import autograd.numpy as anp
import numpy as np
import pytest

import ldr
from ldr.objectives import LDA, PCA


def test_check_passes_on_pca_and_lda(pca_data, lda_data):
    for obj in [PCA(pca_data, 3), PCA(pca_data, 3, manifold="stiefel"), LDA(*lda_data, 2)]:
        report = ldr.check(obj)
        assert report.ok, str(report)
        assert {i.name for i in report.items} >= {"egrad", "ehvp", "phi", "pencil", "invariance"}
        assert bool(report) is True
        assert "PASS" in str(report)


@pytest.mark.parametrize("bug", ["factor", "sign", "missing-term"])
def test_check_fails_on_a_wrong_gradient(lda_data, bug):
    class Buggy(LDA):
        def egrad(self, M):
            G = super().egrad(M)
            if bug == "factor":
                return 0.5 * G
            if bug == "sign":
                return -G
            return -2.0 * (self.A @ M) / np.sum(M * (self.B @ M))  # forgot the ρB term

    report = ldr.check(Buggy(*lda_data, 2))
    assert not report.ok
    assert not report["egrad"].ok
    assert report["egrad"].error > 1e-2


def test_check_fails_on_a_wrong_hessian(pca_data):
    class Buggy(PCA):
        def ehvp(self, M, V):
            return -self.C @ V

    report = ldr.check(Buggy(pca_data, 2))
    assert report["egrad"].ok and not report["ehvp"].ok and not report.ok


def test_check_fails_on_a_wrong_phi(lda_data):
    class Buggy(LDA):
        def phi(self, M):
            return -(self.A - self.ratio(M) * self.B)  # forgot the 1/tr(MᵀBM)

    report = ldr.check(Buggy(*lda_data, 2))
    assert not report["phi"].ok and report["egrad"].ok


def test_check_detects_a_non_invariant_cost_declared_grassmann(rng):
    D = np.diag(np.arange(1.0, 7.0))

    @ldr.objective(shape=(6, 2), manifold="grassmann")
    def brockett(M):
        return anp.trace(M.T @ D @ M @ np.diag([1.0, 2.0]))

    report = ldr.check(brockett)
    assert not report["invariance"].ok
    assert "stiefel" in report["invariance"].message
    brockett.manifold = "stiefel"
    assert ldr.check(brockett).ok


def test_check_reports_an_invariant_stiefel_cost(pca_data):
    report = ldr.check(PCA(pca_data, 2, manifold="stiefel"))
    assert "grassmann" in report["invariance"].message


def test_check_at_a_given_point_and_bad_point(pca_data):
    obj = PCA(pca_data, 2)
    assert ldr.check(obj, M=obj.heuristic()).ok
    with pytest.raises(ValueError, match="orthonormal"):
        ldr.check(obj, M=np.ones((12, 2)))
