"""LPP and NPE from rows read a chunk at a time (a Dask array or memmap): each chunk's own
k-nearest-neighbour graph, its sums merged, the recall against the exact graph over all rows,
and the fit on a LocalCluster."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

import ldr.estimators as est
from ldr.objectives import LPP, NPE
from ldr.objectives.graph import barycenter_weights, knn_edges, lpp_scatters
from ldr.objectives.neighbors import nearest_neighbors, recall_sample

da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def blobs():
    """Three separated clusters in two directions and four noise directions, rotated and
    shifted: 2400 rows × 6."""
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [6.0, 0.0], [3.0, 5.0]])
    z = rng.integers(0, 3, 2400)
    X = np.hstack([centers[z] + rng.standard_normal((2400, 2)),
                   2.0 * rng.standard_normal((2400, 4))])
    return X @ np.linalg.qr(rng.standard_normal((6, 6)))[0] + 1.0


@pytest.mark.parametrize("cls", [LPP, NPE])
def test_one_chunk_gives_the_in_memory_statistics(cls, blobs, tmp_path):
    """A single chunk holds every row: the graph is the exact one (said so: no recall) and
    S_L, S_D and the mean equal the in-memory objective's, from a Dask array and from a
    memmap; the estimator then states no approximation."""
    np.save(tmp_path / "x.npy", blobs)
    ref = cls(blobs, 2, n_neighbors=6)
    for lazy in (da.from_array(blobs, chunks=(blobs.shape[0], 6)),
                 np.load(tmp_path / "x.npy", mmap_mode="r")):
        obj = cls(lazy, 2, n_neighbors=6)
        np.testing.assert_allclose(obj.S_L, ref.S_L, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(obj.S_D, ref.S_D, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(obj.mean_, ref.mean_, rtol=1e-12)
        assert obj.search_.method == "exact" and obj.search_.recall is None
        assert obj.W_ is None
    fit = getattr(est, cls.__name__)(2, n_neighbors=6).fit(np.load(tmp_path / "x.npy",
                                                                 mmap_mode="r"))
    assert fit.approximation_ is None and fit.graph_recall_ is None


def _chunk_graphs(X, bounds, k, symmetric):
    """Each chunk's exact k-NN lists (global indices) and adjacency, by brute force."""
    lists = []
    blocks = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        d = cdist(X[lo:hi], X[lo:hi], "sqeuclidean")
        np.fill_diagonal(d, np.inf)
        nbr = np.argsort(d, axis=1, kind="stable")[:, :k]
        lists.append(lo + nbr)
        blocks.append(knn_edges(nbr, symmetric).sparse())
    return np.vstack(lists), blocks


def test_the_chunk_sums_are_the_block_diagonal_graphs(blobs):
    """With four chunks, LPP's statistics are the in-memory formulas (Eq. 17–18) on the
    block-diagonal graph of the chunks' own graphs, each with its own heat width (the median
    squared edge length of its chunk), and NPE's are those of the block-diagonal
    reconstruction weights: the merge of the chunks' sums loses nothing."""
    X = blobs
    bounds = np.arange(0, 2401, 600)
    Xd = da.from_array(X, chunks=(600, 6))
    _, graphs = _chunk_graphs(X, bounds, 6, True)
    weights = []
    taus = []
    for (lo, hi), G in zip(zip(bounds[:-1], bounds[1:]), graphs):
        Xc = X[lo:hi]
        rows = np.repeat(np.arange(G.shape[0]), np.diff(G.indptr))
        sq = np.sum((Xc[rows] - Xc[G.indices]) ** 2, axis=1)
        taus.append(np.median(sq))
        weights.append(sp.csr_matrix((np.exp(-sq / taus[-1]), G.indices, G.indptr), G.shape))
    W = sp.block_diag(weights).tocsr()
    deg = np.asarray(W.sum(axis=1)).ravel()
    mean = deg @ X / deg.sum()
    Xc = X - mean
    lpp = LPP(Xd, 2, n_neighbors=6)
    np.testing.assert_allclose(lpp.tau_, taus, rtol=1e-12)
    np.testing.assert_allclose(lpp.mean_, mean, rtol=1e-10)
    np.testing.assert_allclose(lpp.S_L, Xc.T @ (deg[:, None] * Xc - W @ Xc), rtol=1e-9,
                               atol=1e-9)
    np.testing.assert_allclose(lpp.S_D, Xc.T @ (deg[:, None] * Xc), rtol=1e-10)

    _, lists = _chunk_graphs(X, bounds, 6, False)
    B = sp.block_diag([barycenter_weights(X[lo:hi], G)
                       for (lo, hi), G in zip(zip(bounds[:-1], bounds[1:]), lists)]).tocsr()
    npe = NPE(Xd, 2, n_neighbors=6)
    Xc = X - X.mean(axis=0)
    E = Xc - B @ Xc
    np.testing.assert_allclose(npe.S_L, E.T @ E, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(npe.S_D, Xc.T @ Xc, rtol=1e-10)


def test_the_recall_is_against_the_exact_graph_over_all_rows(blobs):
    """The recall is the share of each sampled row's exact k nearest neighbours over all rows
    that its chunk's graph holds (a neighbour no farther than the k-th exact one counts),
    recounted by brute force; a binary-weight LPP states no heat width."""
    X = blobs
    bounds = np.arange(0, 2401, 800)
    lists, _ = _chunk_graphs(X, bounds, 5, False)
    sample = recall_sample(X.shape[0], 3)
    d = cdist(X[sample], X, "sqeuclidean")
    kth = np.sort(d, axis=1)[:, 5]           # the row itself is the 0th
    found = np.take_along_axis(d, lists[sample], axis=1)
    expected = np.mean(found <= kth[:, None])
    obj = LPP(da.from_array(X, chunks=(800, 6)), 2, n_neighbors=5, weight="binary",
              random_state=3)
    assert obj.search_.recall == pytest.approx(expected, abs=1e-12)
    assert obj.search_.chunks == 3 and obj.search_.sample == 256
    assert 0 < expected < 0.6 and obj.tau_ is None
    exact, _ = nearest_neighbors(X, 5, "exact")
    assert np.mean(exact[sample] == lists[sample]) < 0.6  # the graphs do differ


def test_rows_read_in_chunks_are_checked_and_refused_clearly(blobs):
    X = blobs.copy()
    X[1234, 2] = np.nan
    with pytest.raises(ValueError, match=r"X: Input contains NaN.*rows 1200\.\.1799"):
        LPP(da.from_array(X, chunks=(600, 6)), 2)
    Xd = da.from_array(blobs, chunks=(600, 6))
    with pytest.raises(ValueError, match="neighbors: .*in memory"):
        NPE(Xd, 2, neighbors="exact")
    with pytest.raises(ValueError, match="radius: .*n_neighbors"):
        LPP(Xd, 2, radius=1.0)
    with pytest.raises(ValueError, match="n_neighbors: must be smaller than the rows of every "
                                         "chunk.*holds 400"):
        NPE(da.from_array(blobs, chunks=((1000, 1000, 400), 6)), 2, n_neighbors=400)
    with pytest.raises(ValueError, match="X: .*in memory"):  # the estimator, before reading
        est.LPP(2, radius=1.0).fit(Xd)


@pytest.mark.parametrize("name,slack", [("LPP", 1.01), ("NPE", 1.05)])
def test_the_estimators_fit_a_dask_array_on_a_cluster(name, slack, blobs, gathers):
    """On a LocalCluster the graph statistics are computed on the workers (only the recall's
    256 rows are gathered): each fit is optimal for its own chunk-graph objective — there,
    no worse than the in-memory fit's answer — and, scored by the in-memory objective, within
    ``slack`` of its optimum (here: with four chunks the chunk graphs hold a quarter of the
    exact neighbours); the fitted estimator says its graph is approximate."""
    distributed = pytest.importorskip("distributed")
    import ldr.objectives.graph as graph

    gathered = gathers(graph)
    ref = getattr(est, name)(2).fit(blobs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        Xd = da.from_array(blobs, chunks=(600, 6))
        lazy = getattr(est, name)(2).fit(Xd)
        Z = lazy.transform(Xd)
        assert isinstance(Z, da.Array)
        np.testing.assert_allclose(Z.compute(), lazy.transform(blobs), rtol=1e-10)
    assert gathered == [("X", 256)]
    own = lazy.objective_
    assert own.ratio(lazy.M_) <= own.ratio(ref.M_) * (1 + 1e-9)
    assert ref.objective_.ratio(lazy.M_) <= slack * ref.ratio_
    assert "in its chunk, 4 chunks" in lazy.approximation_
    assert 0 < lazy.graph_recall_ < 0.5 and ref.approximation_ is None


def test_lpp_scatters_from_chunks_match_the_objective(blobs):
    """The estimator's statistics route (``lpp_scatters``) and the objective agree on rows
    read in chunks."""
    Xd = da.from_array(blobs, chunks=(800, 6))
    sc = lpp_scatters(Xd, 6)
    obj = LPP(Xd, 2, n_neighbors=6)
    np.testing.assert_allclose(sc.S_L, obj.S_L, atol=1e-9)
    assert sc.W is None and sc.tau.shape == (3,)
