"""What ``fit`` hands from one step of the estimators' template to the next
(:mod:`ldr.estimators._base`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ldr.data.statistics import Moments

__all__ = ["FitData"]


@dataclass
class FitData:
    """What ``fit`` validated: the rows (an ndarray, or kept lazy: a Dask array or memmap),
    the labels, the output dtype (float32 for float32 input), whether the rows are read in
    chunks, and the statistics when the estimator computed them."""

    X: object
    y: object
    dtype: type
    chunked: bool = False
    stats: object = None
    #: the span the fit works in (d×k, ``subspace_``) and the original features' mean, when
    #: the data were reduced to it (X then holds the reduced rows or their Moments)
    basis: object = None
    mean: object = None
    #: objective parameters that the preparation fixed (e.g. LPP's τ of all the rows when
    #: some are set aside), over the estimator's own
    params: dict = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return int(self.X.d if isinstance(self.X, Moments) else self.X.shape[1])
