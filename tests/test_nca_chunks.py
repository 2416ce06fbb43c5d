"""NCA from rows read a chunk at a time (a Dask array or memmap): the objective's oracles
against the in-memory ones, sampled batches that are exact when every row is a candidate, and
the estimator's stochastic route from a Dask array on a LocalCluster without gathering it."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import ldr.estimators as est
from ldr.objectives import NCA
from ldr.solvers.routes import BATCH_SIZE

da = pytest.importorskip("dask.array")


@pytest.mark.parametrize("kind", ["dask", "memmap"])
def test_chunked_oracles_equal_the_in_memory_ones(kind, chunk_table, tmp_path):
    """Cost, gradient and Hessian-vector product (two passes over U = X̃M), the units and
    the LDA start (from the chunks' class scatters; the directions up to sign)."""
    X, y = chunk_table
    if kind == "dask":
        lazy = da.from_array(X, chunks=(500, 6))
    else:
        np.save(tmp_path / "x.npy", X)
        lazy = np.load(tmp_path / "x.npy", mmap_mode="r")
    ref = NCA(X, y, 2)
    obj = NCA(lazy, y, 2)
    assert obj.unit_ == pytest.approx(ref.unit_, rel=1e-12)
    np.testing.assert_allclose(obj.mean_, ref.mean_, rtol=1e-12, atol=1e-12)
    rng = np.random.default_rng(0)
    M = 0.5 * rng.standard_normal(ref.shape)
    V = rng.standard_normal(ref.shape)
    assert obj.cost(M) == pytest.approx(ref.cost(M), rel=1e-12)
    np.testing.assert_allclose(obj.egrad(M), ref.egrad(M), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(obj.ehvp(M, V), ref.ehvp(M, V), rtol=1e-9, atol=1e-9)
    start = obj.heuristic()
    expected = ref.heuristic()
    signs = np.sign(np.sum(start * expected, axis=0))
    np.testing.assert_allclose(start * signs, expected, rtol=1e-8, atol=1e-10)


def test_every_row_a_candidate_makes_the_chunk_batches_exact(chunk_table):
    """With m ≥ n columns (the pool is every row) an epoch's chunk batches add up to the
    exact cost and gradient: the neighbours and the far part split each softmax exactly
    (C1); and a batch's gradient matches central differences of its cost."""
    X, y = chunk_table
    obj = NCA(da.from_array(X, chunks=(700, 6)), y, 2).sample_batches(sample=X.shape[0],
                                                                      neighbours=5)
    rng = np.random.default_rng(1)
    M = 0.5 * rng.standard_normal(obj.shape)
    batches = obj.batch_order(np.random.default_rng(2), 256)
    assert sorted(np.concatenate(batches).tolist()) == list(range(X.shape[0]))
    chunks = [obj._rows.chunk_of(int(b[0])) for b in batches]
    assert all(obj._rows.chunk_of(int(i)) == c for b, c in zip(batches, chunks) for i in b)
    assert chunks == sorted(chunks, key=chunks.index)   # a chunk's batches together
    cost = sum(obj.batch(M, b)[0] for b in batches)
    G = sum(obj.batch(M, b)[1] for b in batches)
    assert cost == pytest.approx(obj.cost(M), rel=1e-12)
    np.testing.assert_allclose(G, obj.egrad(M), rtol=1e-9, atol=1e-9)
    idx = batches[0]
    dM = rng.standard_normal(obj.shape)
    h = 1e-6
    fd = (obj.batch(M + h * dM, idx)[0] - obj.batch(M - h * dM, idx)[0]) / (2 * h)
    assert np.sum(obj.batch(M, idx)[1] * dM) == pytest.approx(fd, rel=1e-5)


def test_sampled_chunk_batches_hold_a_chunk_and_the_pool(chunk_table):
    """With m < n, a chunk batch's columns come from the epoch's pool: the gradient of its
    estimate still matches central differences, and the pool changes with the epoch."""
    X, y = chunk_table
    obj = NCA(da.from_array(X, chunks=(600, 6)), y, 2).sample_batches(sample=64,
                                                                      neighbours=8, pool=256)
    rng = np.random.default_rng(3)
    M = 0.5 * rng.standard_normal(obj.shape)
    first = obj.batch_order(np.random.default_rng(4), 100)
    pool = obj._cand._pool.copy()
    for b in first:
        obj.batch(M, b)
    obj.batch_order(np.random.default_rng(5), 100)
    assert not np.array_equal(obj._cand._pool, pool)
    np.testing.assert_allclose(obj._cand._pool_rows, obj._rows.take(obj._cand._pool),
                               rtol=1e-12)
    idx = first[0]
    dM = rng.standard_normal(obj.shape)
    h = 1e-6
    fd = (obj.batch(M + h * dM, idx)[0] - obj.batch(M - h * dM, idx)[0]) / (2 * h)
    assert np.sum(obj.batch(M, idx)[1] * dM) == pytest.approx(fd, rel=1e-5)


def test_the_stochastic_route_fits_a_dask_array_from_its_chunks_on_a_cluster(chunk_table, gathers,
                                                                            monkeypatch,
                                                                            tmp_path):
    """Past ``stochastic_above`` rows a Dask array on a LocalCluster stays out of memory:
    the gathers are the first pool and the sampled start's batches, never all n; the
    answer's exact objective is within the route's stochastic spread of the in-memory fit's
    (measured on this table: the in-memory fits of seeds 0–3 span 0.26% of Σ p_i, and each
    chunked fit is within 0.4% of the same seed's in-memory one); a small array is read whole
    and fits as in memory; transform stays lazy; a memmap is read by the same route."""
    distributed = pytest.importorskip("distributed")
    import ldr.objectives.chunked_rows as chunked_rows
    import ldr.objectives.dml as dml

    monkeypatch.setattr(dml, "POOL_COLUMNS", 600)   # a pool of a quarter of the rows
    X, y = chunk_table
    gathered = gathers(chunked_rows)
    exact = NCA(X, y, 2)
    settings = {"stochastic_above": 1000, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = est.NCA(2, **settings).fit(X, y)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster):
            Xd = da.from_array(X, chunks=(600, 6))
            lazy = est.NCA(2, **settings).fit(Xd, y)
            from_dask = list(gathered)
            Z = lazy.transform(Xd)
            assert isinstance(Z, da.Array)
            np.testing.assert_allclose(Z.compute(), X @ lazy.components_.T, rtol=1e-10)
        small = est.NCA(2).fit(da.from_array(X[:600], chunks=(200, 6)), y[:600])
        np.save(tmp_path / "x.npy", X)
        mapped = est.NCA(2, **settings).fit(np.load(tmp_path / "x.npy", mmap_mode="r"), y)
    assert lazy.stochastic_ and ref.stochastic_
    assert from_dask[0] == ("X", 600)   # the first pool; the next ones come with the chunks
    assert all(k <= BATCH_SIZE for _, k in from_dask[1:])   # the sampled start's batches

    def f(fit):
        return -exact.cost(exact.point(fit.components_))

    assert f(lazy) == pytest.approx(f(ref), rel=5e-3)
    assert mapped.stochastic_ and f(mapped) == pytest.approx(f(ref), rel=5e-3)
    assert lazy.objective_._cand._current == {}   # the fitted estimator holds no chunk
    in_memory = est.NCA(2).fit(X[:600], y[:600])
    np.testing.assert_allclose(small.components_, in_memory.components_, rtol=1e-10,
                               atol=1e-12)


def test_bad_chunked_input_gets_a_clear_error(chunk_table):
    """A NaN in a chunk names the rows; unknown chunk sizes say how to know them; one
    class is refused — before any epoch."""
    X, y = chunk_table
    bad = X.copy()
    bad[700, 2] = np.nan
    fit = est.NCA(2, stochastic_above=100).fit
    with pytest.raises(ValueError, match="NaN or infinity"):
        fit(da.from_array(bad, chunks=(600, 6)), y)
    lazy = da.from_array(X, chunks=(600, 6))
    with pytest.raises(ValueError, match="chunk sizes are unknown"):
        fit(lazy[lazy[:, 0] > -1e9], y)
    with pytest.raises(ValueError, match="two classes"):
        fit(lazy, np.zeros(X.shape[0]))


def test_a_chunks_neighbours_change_only_at_a_refresh(chunk_table):
    """As for rows in memory, a chunk's neighbours are searched at the point of the last
    refresh, not at the point where the chunk happens to be read again: a batch's estimate
    at two points (the sampled start's finite differences) uses the same candidates."""
    X, y = chunk_table
    obj = NCA(da.from_array(X, chunks=(600, 6)), y, 2).sample_batches(sample=64, neighbours=8,
                                                                      pool=256)
    rng = np.random.default_rng(6)
    M1 = rng.standard_normal(obj.shape)
    M2 = rng.standard_normal(obj.shape)
    first = np.arange(0, 100)
    other = np.arange(700, 800)
    obj.batch(M1, first)
    before = obj._cand._current["nbrs"].copy()
    obj.batch(M2, other)               # another chunk read: the first leaves memory
    obj.batch(M2, first)               # read again at another point
    np.testing.assert_array_equal(obj._cand._current["nbrs"], before)
    obj.refresh_batches(M2)
    obj.batch(M2, first)
    assert not np.array_equal(obj._cand._current["nbrs"], before)


def test_the_callers_rows_are_not_changed(chunk_table, tmp_path):
    """Reading chunks standardizes copies: the Dask array's source and a writable memmap
    keep their values after a fit."""
    X, y = chunk_table
    source = X.copy()
    np.save(tmp_path / "x.npy", X)
    mapped = np.load(tmp_path / "x.npy", mmap_mode="r+")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for rows in (da.from_array(source, chunks=(600, 6)), mapped):
            est.NCA(2, stochastic_above=1000).fit(rows, y)
    np.testing.assert_array_equal(source, X)
    np.testing.assert_array_equal(np.asarray(mapped), X)


def test_a_held_sample_is_gathered_once_and_keeps_the_estimate(chunk_table, monkeypatch):
    """A stochastic solver's fixed sample (its start's estimates) held by the objective is
    served from one gathered frame (a sample no larger than a chunk): its batches read no
    chunk, and with every row a column
    their terms are still exact (the neighbours only split each sum); the route's start
    holds its sample and drops it when the epochs begin."""
    from ldr.driver import solve
    from ldr.objectives.candidates import ChunkCandidates
    from ldr.solvers import Adam

    X, y = chunk_table
    obj = NCA(da.from_array(X, chunks=(600, 6)), y, 2).sample_batches(sample=X.shape[0],
                                                                      neighbours=5)
    M = 0.5 * np.random.default_rng(6).standard_normal(obj.shape)
    terms = np.sort(np.random.default_rng(7).choice(X.shape[0], 600, replace=False))
    reads = []
    read = ChunkCandidates._read
    monkeypatch.setattr(ChunkCandidates, "_read",
                        lambda self, c, M: reads.append(c) or read(self, c, M))

    def estimate():
        return sum(obj.batch(M, terms[i:i + 64])[0] for i in range(0, 600, 64))

    plain = estimate()
    assert estimate() == pytest.approx(plain, rel=1e-12)
    assert len(reads) == 8     # each estimate's batches, ordered by row, read every chunk
    obj.hold_terms(terms)
    held = estimate()
    assert estimate() == held
    assert len(reads) == 8     # no chunk read again
    assert held == pytest.approx(plain, rel=1e-12)
    obj.hold_terms(None)
    seen = []
    hold = ChunkCandidates.hold

    def spy(self, held):
        seen.append(held is None)
        hold(self, held)

    monkeypatch.setattr(ChunkCandidates, "hold", spy)
    lazy = NCA(da.from_array(X, chunks=(600, 6)), y, 2).sample_batches(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        solve(lazy, Adam(start_terms=512, max_epochs=1, batch_size=128), start="heuristic")
    held = lazy._cand._held
    assert seen[:2] == [False, True]     # held for the start, dropped at the first epoch
    assert held is None
