"""Data in, statistics out: validation, second-order statistics from rows in chunks, files.

* :mod:`ldr.data.validation` — every check of user data (finite, numeric, shapes, labels,
  magnitude, nonsingular scatter matrices, lazy Dask input refused by in-memory methods);
* :mod:`ldr.data.statistics` — :class:`Moments`: counts, means and centered second-order sums of
  rows, computed per chunk and merged without loss;
* :mod:`ldr.data.rows` — :func:`moments`: one pass over an ndarray, a memmap, a Dask array or
  an iterator of chunks; :func:`map_rows` for a lazy ``transform``;
* :mod:`ldr.data.files` — :func:`load_table`: a CSV, ``.npy`` or a glob of Parquet/CSV files
  (what ``ldr compare --data`` reads).
"""

from ldr.data.files import load_table
from ldr.data.rows import is_chunked, map_rows, moments
from ldr.data.statistics import Moments
from ldr.data.validation import is_lazy

__all__ = ["Moments", "is_chunked", "is_lazy", "load_table", "map_rows", "moments"]
