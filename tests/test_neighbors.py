"""k-nearest-neighbour search: exact, approximate (NN-descent) with its measured recall, and
the switch of ``neighbors="auto"`` in LPP and NPE."""

import importlib.util

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

import ldr
from ldr.estimators import LPP, NPE
from ldr.objectives import neighbors as nbrs
from ldr.objectives.graph import neighbor_edges


def _data(n=1500, d=8, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((5, d)) * 4
    return centers[rng.integers(5, size=n)] + rng.standard_normal((n, d))


def _exact_sets(X, k):
    _, ind = NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(X).kneighbors(X)
    return [set(row[row != i][:k]) for i, row in enumerate(ind)]


@pytest.fixture(scope="module")
def approximate():
    X = _data()
    return X, *nbrs.nearest_neighbors(X, 5, "approximate", random_state=0)


@pytest.mark.parametrize("d", [2, nbrs.TREE_MAX_FEATURES + 5])
def test_exact_search_is_the_brute_force_graph(d):
    """A k-d tree in few features, brute force in many: the same sets as brute force."""
    X = _data(300, d)
    assert (X.shape[1] <= nbrs.TREE_MAX_FEATURES) == (d == 2)
    indices, search = nbrs.nearest_neighbors(X, 4, "exact")
    assert search == nbrs.NeighborSearch("exact", 4)
    assert search.describe(300) is None
    assert [set(row) for row in indices] == _exact_sets(X, 4)


def test_duplicated_rows_never_list_themselves():
    X = _data(200)
    X = np.vstack([X, X[:50]])  # rows 200..249 repeat rows 0..49: distance 0 both ways
    indices, _ = nbrs.nearest_neighbors(X, 3, "exact")
    assert indices.shape == (250, 3)
    assert not (indices == np.arange(250)[:, None]).any()
    assert all(i + 200 in indices[i] for i in range(50))
    assert all(i in indices[i + 200] for i in range(50))


def test_approximate_graph_and_its_measured_recall(approximate):
    X, indices, search = approximate
    assert search.method == "approximate" and search.sample == nbrs.RECALL_SAMPLE
    assert indices.shape == (X.shape[0], 5)
    assert not (indices == np.arange(X.shape[0])[:, None]).any()
    # the recall the search reports is the one counted from all rows' exact neighbours
    exact = _exact_sets(X, 5)
    rows = np.random.default_rng(0).choice(X.shape[0], nbrs.RECALL_SAMPLE, replace=False)
    counted = np.mean([len(exact[i] & set(indices[i])) / 5 for i in rows])
    assert search.recall == pytest.approx(counted, abs=1e-12)
    assert search.recall > 0.95
    assert f"{search.recall:.1%}" in search.describe(X.shape[0])


def test_recall_catches_a_wrong_graph(approximate):
    X, indices, _ = approximate
    wrong = np.roll(indices, 1, axis=0)  # another row's neighbours
    assert nbrs.neighbor_recall(X, wrong) < 0.2
    assert nbrs.neighbor_recall(X, indices, sample=X.shape[0]) > 0.95


def test_auto_switches_past_the_exact_size(monkeypatch):
    assert nbrs.resolve_neighbors("auto", nbrs.EXACT_MAX_SAMPLES) == "exact"
    assert nbrs.resolve_neighbors("auto", nbrs.EXACT_MAX_SAMPLES + 1) == "approximate"
    X = _data(600)
    exact = LPP(n_components=2).fit(X)
    assert exact.graph_recall_ is None and exact.approximation_ is None
    monkeypatch.setattr(nbrs, "EXACT_MAX_SAMPLES", 500)
    for cls in (LPP, NPE):
        est = cls(n_components=2).fit(X)
        assert est.objective_.search_.method == "approximate"
        assert 0.95 < est.graph_recall_ <= 1
        assert "approximate 5-nearest-neighbour graph of 600 rows" in est.approximation_


def test_approximate_fit_is_near_the_exact_one():
    """On well-separated clusters the approximate graph misses few edges, and LPP's and NPE's
    subspaces from it are those of the exact graph (largest principal angle)."""
    X = _data(1500)
    for cls in (LPP, NPE):
        exact = cls(n_components=2, neighbors="exact").fit(X)
        approx = cls(n_components=2, neighbors="approximate").fit(X)
        assert approx.graph_recall_ > 0.95
        Q1 = np.linalg.qr(exact.components_.T)[0]
        Q2 = np.linalg.qr(approx.components_.T)[0]
        sines = np.sqrt(np.clip(1 - np.linalg.svd(Q1.T @ Q2, compute_uv=False) ** 2, 0, 1))
        assert sines.max() < 0.1
        assert approx.ratio_ == pytest.approx(exact.ratio_, rel=0.05)


def test_bad_neighbors_are_refused():
    X = _data(100)
    with pytest.raises(ValueError, match="neighbors: expected one of"):
        LPP(n_components=2, neighbors="annoy").fit(X)
    with pytest.raises(ValueError, match="ε-ball graph .* exactly"):
        neighbor_edges(X, radius=1.0, neighbors="approximate")
    with pytest.raises(ValueError, match="neighbors: expected one of"):
        neighbor_edges(X, radius=1.0, neighbors="hnsw")
    with pytest.raises(ValueError, match="n_neighbors: must be smaller than n_samples"):
        nbrs.nearest_neighbors(X[:4], 4, "approximate")
    assert ldr.objectives.NPE(X, 2, n_neighbors=4, neighbors="exact").search_.method == "exact"


@pytest.mark.filterwarnings("ignore:.*did not converge")  # five iterations: the targets only
def test_large_margin_targets_switch_on_the_exact_search_pairs(monkeypatch):
    """LargeMarginDML's target neighbours, class by class: "auto" is exact while Σ n_c² ≤
    EXACT_MAX_SAMPLES², NN-descent beyond; the approximate targets are classmates, their
    measured recall is reported, and they are nearly all the exact ones."""
    from ldr.estimators import LargeMarginDML
    from ldr.objectives import LargeMarginDML as Objective

    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 400)
    X = rng.standard_normal((1200, 6)) + 3.0 * y[:, None]
    exact = Objective(X, y, 2)
    assert exact.target_recall_ is None
    # Σ n_c² = 3 · 400² = 480 000: as one set of 692 rows
    monkeypatch.setattr(nbrs, "EXACT_MAX_SAMPLES", 692)
    assert Objective(X, y, 2).target_recall_ is None
    monkeypatch.setattr(nbrs, "EXACT_MAX_SAMPLES", 691)
    approx = Objective(X, y, 2)
    assert 0.95 < approx.target_recall_ <= 1
    assert np.all(y[approx.targets_] == y[:, None])
    same = np.mean([len(set(a) & set(b)) / 3 for a, b in zip(approx.targets_, exact.targets_)])
    assert same > 0.95
    model = LargeMarginDML(2, max_iter=5).fit(X, y)
    assert model.target_recall_ == approx.target_recall_
    assert "approximate target neighbours (3 per sample" in model.approximation_
    assert LargeMarginDML(2, neighbors="exact", max_iter=5).fit(X, y).approximation_ is None


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_rows_of_another_namespace_are_searched_exactly_on_their_device(monkeypatch):
    """A tensor's k nearest neighbours are found by strips of rows in PyTorch (a strip of 7
    rows here), the sets brute force finds, a duplicated row's twin first; NN-descent, which
    runs on NumPy rows, is refused for it."""
    import array_api_strict
    import torch

    X = _data(300, 20)
    X = np.vstack([X, X[:20]])               # rows 300..319 repeat rows 0..19
    monkeypatch.setattr(nbrs, "STRIP_ENTRIES", 7 * X.shape[0])
    indices, search = nbrs.nearest_neighbors(torch.as_tensor(X), 4, "auto")
    assert isinstance(indices, torch.Tensor) and search == nbrs.NeighborSearch("exact", 4)
    assert all(indices[i, 0] == i + 300 and indices[i + 300, 0] == i for i in range(20))
    # the exact neighbours' distances (a duplicated row ties with its twin: compare distances),
    # by PyTorch's topk, the array API's sort and NumPy's argpartition
    D = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=2)
    np.fill_diagonal(D, np.inf)
    for found in (indices.numpy(), np.asarray(nbrs.strip_search(array_api_strict.asarray(X), 4)),
                  nbrs.strip_search(X, 4)):
        np.testing.assert_allclose(np.take_along_axis(D, found, axis=1),
                                   np.sort(D, axis=1)[:, :4], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="neighbors: the approximate search .* NumPy"):
        nbrs.nearest_neighbors(torch.as_tensor(X), 4, "approximate")
