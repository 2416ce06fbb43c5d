"""Objectives, one module per method family (installed as ``ldr.objectives``)."""

from ldr.objectives.lda import LDA
from ldr.objectives.pca import PCA
from ldr.objectives.quotient import QuotientOfTraces

__all__ = ["LDA", "PCA", "QuotientOfTraces"]
