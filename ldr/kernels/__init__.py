"""The kernels of HSIC's family and the machinery that makes them scale.

* :mod:`ldr.kernels.family` — the ISM kernel family k = f(β) (Gaussian, polynomial, linear,
  squared, multiquadric, a user's ``Custom`` f, conic combinations), re-exported here:
  ``ldr.kernels.Gaussian(sigma)``;
* :mod:`ldr.kernels.tiles` — HSIC's n×n sums in row blocks within a memory budget, optionally
  as Dask tasks;
* :mod:`ldr.kernels.features` — random Fourier features and Nyström landmarks for n ≳ 10⁵.
"""

from ldr.kernels.family import (
    BUILTIN,
    KINDS,
    Combination,
    Custom,
    Gaussian,
    Kernel,
    Linear,
    Multiquadric,
    Polynomial,
    Squared,
    beta,
    make_kernel,
    median_distance,
)

__all__ = ["BUILTIN", "KINDS", "Combination", "Custom", "Gaussian", "Kernel", "Linear",
           "Multiquadric", "Polynomial", "Squared", "beta", "make_kernel", "median_distance"]
