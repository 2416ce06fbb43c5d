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


def test_every_row_of_the_readme_sparse_pca_check_says_what_it_means():
    """The README's sparse PCA (issue 23): the invariance row used to read "[ok] invariance
    error 3.48e-03 (tol 1e-10)" and there was no Φ-oracle row although the README's comment
    promises one."""
    X, _ = ldr.datasets.load("wine")
    C = X.T @ X / len(X)

    @ldr.objective(shape=(13, 2), manifold="stiefel")
    def sparse_pca(M):
        return -anp.trace(M.T @ C @ M) + 0.1 * anp.sum(anp.sqrt(M**2 + 1e-6))

    report = ldr.check(sparse_pca)
    lines = str(report).split("\n")
    assert lines[0].endswith("PASS") and len(lines) == 6
    rows = {line.split("]")[1].split()[0]: line for line in lines[1:]}
    assert rows["gradient"].startswith("  [ok  ] gradient   error ")
    assert "≤ tol 1e-06: egrad (autograd) agrees with central differences of the cost" in \
        rows["gradient"]
    assert "ehvp (autograd) agrees with central differences of egrad" in rows["Hessian"]
    assert rows["Φ-oracle"] == ("  [ -- ] Φ-oracle   not provided (ISM needs one: a symmetric "
                                "Φ(M) with egrad(M) = 2 Φ(M) M)")
    assert rows["pencil"].startswith("  [ -- ] pencil     not provided (SCF needs one")
    err = report["invariance"].error
    assert 1e-4 < err < 1e-1  # the L1 term depends on the basis
    assert rows["invariance"] == (f"  [info] invariance to M → MR: not invariant (error "
                                  f"{err:.1e}, tol 1e-10): a Stiefel cost, as declared — fine")
    assert report["phi"].kind == "absent" and report["invariance"].kind == "info"


def test_a_failing_row_says_so_and_why(lda_data):
    class Buggy(LDA):
        def egrad(self, M):
            return -super().egrad(M)

    row = str(ldr.check(Buggy(*lda_data, 2))["egrad"])
    assert row.startswith("[FAIL] gradient   error ") and "> tol 1e-06" in row
    assert "the gradient is wrong" in row
    ok = str(ldr.check(LDA(*lda_data, 2))["invariance"])
    assert ok.startswith("[ok  ] invariance error ") and "as a Grassmann cost must be" in ok
