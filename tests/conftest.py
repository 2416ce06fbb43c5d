import numpy as np
import pytest

import ldr
from ldr import objectives as o


@pytest.fixture(scope="module")
def wine():
    """scikit-learn's wine data, features standardized, and its classes (a module that needs
    it otherwise defines its own ``wine``)."""
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="session")
def chunk_table():
    """Three shifted and scaled classes, 2400 rows × 6 (the metric learners' chunked-rows
    tests: ``tests/test_nca_chunks.py``, ``tests/test_lmnn_chunks.py``)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=2400, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, class_sep=1.5,
                               random_state=0)
    return 3.0 * X + 1.0, y


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def pca_data():
    return ldr.datasets.make_pca(200, 12, seed=3)


@pytest.fixture
def lda_data():
    return ldr.datasets.make_lda(8, r=2, n_per_class=150, seed=4)


def _every_objective(s: float = 1.0) -> dict:
    """One small instance of every objective in ldr.objectives, on data multiplied by s."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5)) @ rng.standard_normal((5, 5))
    y = np.repeat([0, 1, 2], 20)
    Xa, Xb = ldr.datasets.make_cca(60, 6, seed=0)
    A = rng.standard_normal((5, 5))
    F = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 6)) * 2   # a proper FA model
    F += rng.standard_normal((300, 6)) * [0.5, 1.0, 1.5, 0.5, 1.0, 2.0]
    return {
        "PCA": o.PCA(s * X, 2), "LDA": o.LDA(s * X, y, 2),
        "QuotientOfTraces": o.QuotientOfTraces(s * s * (A + A.T),
                                               s * s * (np.eye(5) + 0.1 * A @ A.T), 2),
        "OrthogonalCCA": o.OrthogonalCCA(s * Xa, s * Xb, 2),
        "TraditionalCCA": o.TraditionalCCA(s * Xa, s * Xb, 2),
        "MAF": o.MAF(s * ldr.datasets.make_maf(80, 5, seed=0), 2), "SFA": o.SFA(s * X, 2),
        "MDS": o.MDS(s * X, 2), "LPP": o.LPP(s * X, 2, n_neighbors=5),
        "NPE": o.NPE(s * X, 2, n_neighbors=5), "KernelSDR": o.KernelSDR(s * X, y, 2),
        "PPCA": o.PPCA(s * X, 2), "FactorAnalysis": o.FactorAnalysis(s * F, 2),
        "HSIC": o.HSIC.supervised(s * X, y, 2),
        # reg is in squared-distance units (POT's convention): it scales with the data
        "WDA": o.WDA(s * X, y, 2, reg=s * s),
        "UndercompleteICA": o.UndercompleteICA(s * ldr.datasets.make_uica(300, 5, 2, seed=0)[0],
                                               2),
        # the ridge term α‖B‖² must scale as ‖Y − XB‖² does (s²) when X and Y both do
        "ReducedRankRegression": o.ReducedRankRegression(
            s * X, s * (X @ A[:, :4] + rng.standard_normal((60, 4))), 2, alpha=0.1 * s * s),
        # NCA's softmax and LMNN's unit margin see absolute distances: not invariant at a
        # fixed L, but the point M is Lᵀ in units of the data's scale (objectives/dml.py),
        # so the cost as a function of M — and every run — is the same for s·X
        "NCA": o.NCA(s * X, y, 2), "LargeMarginDML": o.LargeMarginDML(s * X, y, 2),
    }


@pytest.fixture
def every_objective():
    """``factory(s)``: one small instance of every objective in ldr.objectives, on data
    multiplied by s (default 1)."""
    return _every_objective


@pytest.fixture(scope="module")
def one_torch_thread():
    """PyTorch's small CPU operations on one thread for a module's tests (its default pool,
    on a busy machine, made the HSIC tests 30× slower); without PyTorch, nothing."""
    try:
        import torch
    except ImportError:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def gathers(monkeypatch):
    """Spy on the rows a module gathers from a Dask array or memmap (its ``take_rows``):
    ``gathers(module)`` patches it for the rest of the test and returns the list to which each
    gather's ``(name, row count)`` is appended."""
    def watch(module):
        seen = []
        take = module.take_rows

        def spy(A, rows, name="X"):
            seen.append((name, len(rows)))
            return take(A, rows, name)

        monkeypatch.setattr(module, "take_rows", spy)
        return seen

    return watch
