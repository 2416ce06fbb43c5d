"""The driver: the one loop (:func:`ldr.driver.loop.solve`), second-order certificates,
oracle checks, side-by-side comparisons and their tables, and the registry of methods."""

from ldr.driver.loop import solve

__all__ = ["solve"]
