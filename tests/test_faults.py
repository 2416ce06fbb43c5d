"""Faults on a real cluster: a worker killed in the middle of a statistics pass or of an HSIC
Φ pass gives the same answer (Dask reruns its tasks) — never a partial sum; a chunk that
raises is an error naming the chunk; chunks that change width or dtype mid-way are refused
by name.  In-process workers (``processes=False``) keep each test to about a second."""

import threading
import time

import numpy as np
import pytest

import ldr
from ldr.core.errors import ChunkError, ParameterError
from ldr.data.rows import moments

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

N, D, BLOCK = 120, 5, 20


def _rows():
    rng = np.random.default_rng(0)
    return rng.standard_normal((N, D)) * [1, 2, 3, 4, 5] + 1e3


#: the loaders' shared state, by token (tasks are pickled even for in-process workers, so a
#: loader is found again by its token: module state is shared by the in-process workers)
_LOADERS: dict = {}
_LOCK = threading.Lock()


def _read(token, i):
    loader = _LOADERS[token]
    with _LOCK:  # the first block read, and that block again when the fault is persistent
        first = loader.fault is not None and (
            not loader.fired or (getattr(loader.fault, "persistent", False)
                                 and i == loader.fired[0]))
        if first and not loader.fired:
            loader.fired.append(i)
    block = loader.X[i * BLOCK:(i + 1) * BLOCK]
    return loader.fault(i, block) if first else block


class Loader:
    """Blocks of ``_rows()`` read by a task each; ``fault(i, block)`` acts inside the first
    block read (once): kill the worker running it, raise, or hand back another shape."""

    def __init__(self, fault=None):
        self.X, self.fault, self.fired = _rows(), fault, []
        self.token = f"loader-{id(self)}"
        _LOADERS[self.token] = self

    def array(self):
        blocks = [da.from_delayed(dask.delayed(_read, pure=False)(self.token, i), (BLOCK, D),
                                  dtype=float) for i in range(N // BLOCK)]
        return da.concatenate(blocks)


def _kill_my_worker(i, block):
    worker = distributed.get_worker()
    worker.loop.add_callback(worker.close, executor_wait=False)
    time.sleep(0.3)  # the worker goes away while this task still runs
    return block


@pytest.fixture
def cluster():  # a fresh one per test: the tests kill workers
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster


def _same(a, b):
    for key in ("n", "mean", "scatter"):
        np.testing.assert_array_equal(np.asarray(getattr(a, key)), np.asarray(getattr(b, key)))


def test_a_worker_killed_mid_statistics_pass_gives_the_same_answer(cluster):
    reference = moments(Loader().array())  # no cluster: the threaded scheduler
    exact = ldr.estimators.PCA(2).fit(_rows())
    with distributed.Client(cluster) as client:
        before = len(client.scheduler_info()["workers"])
        loader = Loader(_kill_my_worker)
        stats = moments(loader.array())
        est = ldr.estimators.PCA(2).fit(Loader(_kill_my_worker).array())
        time.sleep(0.2)
        after = len(client.scheduler_info()["workers"])
    assert loader.fired and after < before  # a worker did die mid-pass
    _same(stats, reference)  # recomputed on the survivors: every chunk counted once
    np.testing.assert_allclose(stats.covariance(), np.cov(_rows(), rowvar=False, bias=True),
                               rtol=1e-12)
    np.testing.assert_allclose(est.transform(_rows()), exact.transform(_rows()), rtol=1e-9,
                               atol=1e-9)


def _raise(i, block):
    raise OSError(f"disk gone while reading block {i}")


_raise.persistent = True


def _raise_once(i, block):
    raise OSError(f"a transient fault reading block {i}")


@pytest.mark.parametrize("where", ["threads", "cluster"])
def test_a_chunk_that_raises_is_an_error_naming_the_chunk(where, cluster):
    def run():
        loader = Loader(_raise)
        with pytest.raises(ChunkError) as err:
            ldr.estimators.PCA(2).fit(loader.array())
        return loader, err.value

    if where == "cluster":
        with distributed.Client(cluster):
            loader, err = run()
    else:
        loader, err = run()
    i = loader.fired[0]
    assert (err.param, err.chunk, err.rows) == ("X", i, (i * BLOCK, (i + 1) * BLOCK - 1))
    assert "OSError" in str(err) and f"chunk {i} (rows {i * BLOCK}..{(i + 1) * BLOCK - 1})" \
        in str(err)
    assert isinstance(err.__cause__, OSError)


@pytest.mark.parametrize("where", ["threads", "cluster"])
def test_a_chunk_that_raises_once_is_read_again(where, cluster):
    reference = moments(Loader().array())
    if where == "cluster":
        with distributed.Client(cluster):
            loader = Loader(_raise_once)
            stats = moments(loader.array())
    else:
        loader = Loader(_raise_once)
        stats = moments(loader.array())
    assert loader.fired
    _same(stats, reference)  # every chunk once, merged in the same order


def _wider(i, block):
    return np.hstack([block, block[:, :1]])


def _strings(i, block):
    return block.astype(str)


def _float32(i, block):
    return block.astype(np.float32)


@pytest.mark.parametrize("fault, message", [(_wider, "change width mid-way"),
                                            (_strings, "must be numeric")])
def test_chunks_that_change_width_or_dtype_mid_way_are_refused(fault, message, cluster):
    with distributed.Client(cluster):
        loader = Loader(fault)
        with pytest.raises(ParameterError, match=message) as err:
            moments(loader.array())
    i = loader.fired[0]
    assert err.value.param == "X" and f"rows {i * BLOCK}..{(i + 1) * BLOCK - 1}" in str(err.value)


def test_a_float32_chunk_among_float64_ones_is_read_as_float64():
    # numeric chunks of another precision are converted (each chunk is read as float64):
    # the statistics are those of the float32-rounded rows, nothing is refused
    loader = Loader(_float32)
    stats = moments(loader.array())
    X = _rows()
    i = loader.fired[0]
    X[i * BLOCK:(i + 1) * BLOCK] = X[i * BLOCK:(i + 1) * BLOCK].astype(np.float32)
    np.testing.assert_allclose(stats.covariance(), np.cov(X, rowvar=False, bias=True),
                               rtol=1e-12)


_TILE_KILLS: list = []


def _task_sums_killing_once(*args):
    from ldr.kernels import tiles

    with _LOCK:
        first = not _TILE_KILLS
        if first:
            _TILE_KILLS.append(distributed.get_worker().address)
    if first:
        _kill_my_worker(0, None)
    return tiles._ORIGINAL_TASK_SUMS(*args)


def test_a_worker_killed_mid_hsic_phi_pass_gives_the_same_answer(cluster, monkeypatch):
    from ldr.kernels import tiles
    from ldr.objectives import HSIC

    rng = np.random.default_rng(1)
    X = rng.standard_normal((90, 4))
    y = rng.integers(0, 3, 90)
    W = np.linalg.qr(rng.standard_normal((4, 2)))[0]
    expected = HSIC.supervised(X, y, 2, block_size=23).phi(W)  # the in-process loop
    monkeypatch.setattr(tiles, "_ORIGINAL_TASK_SUMS", tiles._task_sums, raising=False)
    monkeypatch.setattr(tiles, "_task_sums", _task_sums_killing_once)
    with distributed.Client(cluster) as client:
        before = len(client.scheduler_info()["workers"])
        obj = HSIC.supervised(X, y, 2, block_size=23, backend="dask")
        phi = obj.phi(W)  # one of its block tasks kills the worker running it
        time.sleep(0.2)
        after = len(client.scheduler_info()["workers"])
        again = obj.phi(W)  # and the next pass runs on the survivors
    assert _TILE_KILLS and after < before
    np.testing.assert_allclose(phi, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(again, expected, rtol=1e-12, atol=1e-14)
