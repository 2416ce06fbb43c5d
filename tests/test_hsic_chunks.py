"""The HSIC estimators from rows read a chunk at a time (a Dask array or memmap): the
standardization by one pass over the chunks, σ from the in-memory fit's seeded sample, only
landmark rows gathered, every Φ and every Nyström U-step mapped over the chunks — the same
answer as the in-memory fit on the same approximation."""

import numpy as np
import pytest

import ldr.objectives.chunked_rows as chunked_rows
from ldr.core.errors import ParameterError
from ldr.estimators import KDAC, SemiSupervisedHSIC, SupervisedHSIC, UnsupervisedHSIC, spectral
from ldr.manifolds import sin_largest_angle

da = pytest.importorskip("dask.array")

N = 2400
#: the approximation in memory too (below the sizes where "auto" switches to it)
APPROXIMATE = {"approximation": "nystroem", "n_kernel_features": 60}


@pytest.fixture(scope="module")
def blobs():
    """Four blobs at (±3, ±3) in two directions, three noise directions, rotated, shifted
    and scaled per feature: ``(X, blob, left)`` with ``left`` the sign of the first
    direction (KDAC's existing clustering; the alternative is the second)."""
    rng = np.random.default_rng(0)
    blob = rng.integers(0, 4, N)
    centers = 3.0 * np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]])
    Z = np.hstack([centers[blob] + rng.standard_normal((N, 2)), rng.standard_normal((N, 3))])
    X = Z @ np.linalg.qr(rng.standard_normal((5, 5)))[0]
    return X * np.array([1.0, 10.0, 0.1, 3.0, 1.0]) + 5.0, blob, (blob >= 2).astype(int)


def _estimators(blob, left):
    clusters = {"n_clusters": 2, "spectral": "nystroem", **APPROXIMATE}
    return [(SupervisedHSIC(2, **APPROXIMATE), blob),
            (UnsupervisedHSIC(2, **clusters), None),
            (SemiSupervisedHSIC(2, **clusters), np.eye(4)[blob]),
            (KDAC(1, **clusters), left)]


def _same_fit(a, b):
    assert sin_largest_angle(a.M_, b.M_) < 1e-8
    assert b.cost_ == pytest.approx(a.cost_, rel=1e-8)
    np.testing.assert_allclose(b.mean_, a.mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.scale_, a.scale_, rtol=1e-12)
    assert b.kernel_.sigma == pytest.approx(a.kernel_.sigma, rel=1e-12)
    assert b.approximation_ == a.approximation_
    if hasattr(a, "labels_"):
        np.testing.assert_array_equal(b.labels_, a.labels_)
        assert b.n_outer_ == a.n_outer_


def test_the_four_paradigms_from_a_local_cluster_equal_the_in_memory_fits(blobs, gathers,
                                                                         monkeypatch):
    """On a LocalCluster: the kernel passes run as tasks, the client gathers only the
    landmark pools and σ's sample (never all rows), once each, and each fit is the in-memory
    one; KDAC finds the alternative split, not the existing one."""
    distributed = pytest.importorskip("distributed")
    X, blob, left = blobs
    monkeypatch.setattr(spectral, "LANDMARK_POOL", 8)   # the U-step's pool: 480 of 2400 rows
    monkeypatch.setattr(chunked_rows.ChunkedRows, "block_rows", 300)  # chunks in 3 blocks
    gathered = gathers(chunked_rows)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, \
            distributed.get_task_stream(client) as stream:
        for est, y in _estimators(blob, left):
            ref = type(est)(**est.get_params()).fit(X, y)
            gathered.clear()
            lazy = est.fit(da.from_array(X, chunks=(700, -1)), y)
            _same_fit(ref, lazy)
            assert gathered and max(count for _, count in gathered) < X.shape[0]
            # σ's sample, the W-step's landmarks and the U-step's pool, each gathered once
            # however many rounds ask for them
            assert len(gathered) <= 3 and len(set(gathered)) == len(gathered)
            Z = lazy.transform(da.from_array(X, chunks=(700, -1)))
            np.testing.assert_allclose(Z.compute(), lazy.transform(X), rtol=1e-12, atol=1e-12)
    ran = {str(t["key"][0] if isinstance(t["key"], tuple) else t["key"]) for t in stream.data}
    for name in ("first_pass", "second_pass", "phi0_sums", "degree_sums", "embedding_rows"):
        assert any(key.startswith(name) for key in ran), name
    kdac = lazy
    other = kdac.labels_
    agree = max(np.mean(other == (blob % 2)), np.mean(other != (blob % 2)))
    assert agree > 0.95  # the second direction's split


def test_a_memmap_fits_as_the_array(blobs, tmp_path):
    """An ``np.memmap`` is read in blocks the same way (in this process)."""
    X, blob, left = blobs
    np.save(tmp_path / "x.npy", X)
    for est, y in _estimators(blob, left)[:2]:
        ref = type(est)(**est.get_params()).fit(X, y)
        _same_fit(ref, est.fit(np.load(tmp_path / "x.npy", mmap_mode="r"), y))


def test_settings_that_need_the_rows_in_memory_refuse_a_dask_array(blobs):
    """The exact kernel, another kernel and the exact U-step form n×n arrays: a Dask array
    is refused with the memory they would need, nothing computed."""
    X, blob, left = blobs
    lazy = da.from_array(X, chunks=(700, -1))
    for est, y in [(SupervisedHSIC(2, approximation=None), blob),
                   (SupervisedHSIC(2, kernel="squared"), blob),
                   (UnsupervisedHSIC(2, spectral="exact"), None)]:
        with pytest.raises(ParameterError, match="in memory"):
            est.fit(lazy, y)
