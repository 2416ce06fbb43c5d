"""LargeMarginDML from rows read a chunk at a time (a Dask array or memmap): the target
neighbours searched within each chunk, the exact oracles by passes over U = X̃M, the sampled
batches from one chunk, and the fit on a LocalCluster."""

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning

import ldr.estimators as est
from ldr.objectives import LargeMarginDML
from ldr.objectives.lmnn import chunk_targets

da = pytest.importorskip("dask.array")


def test_one_chunk_gives_the_in_memory_targets_and_oracles(chunk_table, tmp_path):
    """A single chunk holds every classmate: the targets are the exact ones (recall 1), and
    cost, gradient and Hessian-vector product (rows in their own order, strips in class
    order) equal the in-memory objective's, from a Dask array and from a memmap."""
    X, y = chunk_table
    np.save(tmp_path / "x.npy", X)
    ref = LargeMarginDML(X, y, 2)
    rng = np.random.default_rng(0)
    M = 0.5 * rng.standard_normal(ref.shape)
    V = rng.standard_normal(ref.shape)
    for lazy in (da.from_array(X, chunks=(X.shape[0], 6)),
                 np.load(tmp_path / "x.npy", mmap_mode="r")):
        obj = LargeMarginDML(lazy, y, 2)
        np.testing.assert_array_equal(obj.targets_, ref.targets_)
        assert obj.target_recall_ == 1.0
        assert obj.cost(M) == pytest.approx(ref.cost(M), rel=1e-12)
        np.testing.assert_allclose(obj.egrad(M), ref.egrad(M), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(obj.ehvp(M, V), ref.ehvp(M, V), rtol=1e-9, atol=1e-9)


def test_chunk_targets_are_the_nearest_classmates_in_the_chunk_and_recall_is_measured(chunk_table):
    """Each row's targets are its k nearest classmates among its chunk's rows (brute force),
    and the recall is the share of the exact targets over all rows they hold, counted on
    the sampled rows by brute force."""
    X, y = chunk_table
    obj = LargeMarginDML(da.from_array(X, chunks=(500, 6)), y, 2)
    rows = obj._rows
    z = obj.codes_
    T, valid, recall = chunk_targets(rows, z, 3, "auto", 0)
    np.testing.assert_array_equal(T, obj.targets_)
    Xs = np.vstack([rows.read(c) for c in range(rows.n_chunks)])
    for i in np.random.default_rng(1).choice(X.shape[0], 40, replace=False):
        c = rows.chunk_of(int(i))
        mates = np.arange(rows.bounds[c], rows.bounds[c + 1])
        mates = mates[(z[mates] == z[i]) & (mates != i)]
        d = cdist(Xs[i:i + 1], Xs[mates], "sqeuclidean")[0]
        assert valid[i].all()
        assert set(T[i]) == set(mates[np.argsort(d)[:3]])
    sample = np.sort(np.random.default_rng(0).choice(X.shape[0], 256, replace=False))
    hits = 0
    for i in sample:
        d = cdist(Xs[i:i + 1], Xs[z == z[i]], "sqeuclidean")[0]
        kth = np.sort(d)[3]                  # the row itself is the nearest, at 0
        hits += int(np.sum(cdist(Xs[i:i + 1], Xs[T[i]], "sqeuclidean")[0] <= kth))
    assert recall == pytest.approx(hits / (3 * sample.shape[0]), abs=1e-12)
    assert 0.1 < recall < 0.6   # a chunk holds a fifth of each class


def test_every_row_a_candidate_makes_the_chunk_batches_exact(chunk_table):
    """With m ≥ n columns an epoch's chunk batches add up to the exact cost and gradient of
    the chunked objective (its targets in the batch's chunk, read from it), and a batch's
    gradient matches central differences of its cost."""
    X, y = chunk_table
    obj = LargeMarginDML(da.from_array(X, chunks=(700, 6)), y, 2).sample_batches(
        sample=X.shape[0], neighbours=5)
    rng = np.random.default_rng(1)
    M = 0.5 * rng.standard_normal(obj.shape)
    batches = obj.batch_order(np.random.default_rng(2), 256)
    cost = sum(obj.batch(M, b)[0] for b in batches)
    G = sum(obj.batch(M, b)[1] for b in batches)
    assert cost == pytest.approx(obj.cost(M), rel=1e-10)
    np.testing.assert_allclose(G, obj.egrad(M), rtol=1e-8, atol=1e-8)
    idx = batches[0]
    dM = rng.standard_normal(obj.shape)
    h = 1e-6
    fd = (obj.batch(M + h * dM, idx)[0] - obj.batch(M - h * dM, idx)[0]) / (2 * h)
    assert np.sum(obj.batch(M, idx)[1] * dM) == pytest.approx(fd, rel=1e-5)
    spanning = np.array([0, 900, 1800])     # a batch across chunks gathers its targets
    assert obj.batch(M, spanning)[0] == pytest.approx(
        sum(obj.batch(M, np.array([i]))[0] for i in spanning), rel=1e-10)


def test_the_stochastic_route_fits_a_dask_array_on_a_cluster(chunk_table, gathers, monkeypatch):
    """Past ``stochastic_above`` rows a Dask array on a LocalCluster is fitted from its
    chunks: the gathers are the first pool, the recall sample and the sampled start's
    batches, never all n; the fit minimizes its own (chunk-target) objective — at its
    answer that objective is no higher than at the in-memory fit's answer — and says its
    targets are approximate; neighbors="exact" is refused for such rows."""
    distributed = pytest.importorskip("distributed")
    import ldr.objectives.chunked_rows as chunked_rows
    import ldr.objectives.dml as dml

    monkeypatch.setattr(dml, "POOL_COLUMNS", 600)   # a pool of a quarter of the rows
    X, y = chunk_table
    gathered = gathers(chunked_rows)
    settings = {"stochastic_above": 1000, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = est.LargeMarginDML(2, **settings).fit(X, y)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster):
            Xd = da.from_array(X, chunks=(600, 6))
            lazy = est.LargeMarginDML(2, **settings).fit(Xd, y)
            # the recall's 256 rows and their 3·256 targets, the pool, the sampled start's
            # batches and their targets outside them (each gathered once)
            assert all(k <= 3 * 256 for _, k in gathered) and len(gathered) <= 12
            Z = lazy.transform(Xd)
            assert isinstance(Z, da.Array)
            np.testing.assert_allclose(Z.compute(), X @ lazy.components_.T, rtol=1e-10)
    assert lazy.stochastic_ and ref.stochastic_
    own = lazy.objective_
    assert own.cost(own.point(lazy.components_)) <= own.cost(own.point(ref.components_))
    assert "in its chunk" in lazy.approximation_ and 0 < lazy.target_recall_ < 1
    assert ref.approximation_ is None
    with pytest.raises(ValueError, match="in memory"):
        est.LargeMarginDML(2, neighbors="exact", **settings).fit(Xd, y)
