"""Errors that carry what they are about as data.

A bad value of one named parameter raises :class:`ParameterError`, a ``ValueError`` whose
``param`` attribute names the parameter as the raising function calls it (``"r"``, ``"reg"``,
``"label_column"``) and whose ``reason`` is the message without that name; ``str()`` is
``"param: reason"``.  A caller that exposes the parameter under another name — an estimator's
``n_components`` for an objective's ``r``, the command line's ``--reg`` for ``reg`` — catches it
and re-raises :meth:`ParameterError.renamed`, instead of parsing the message::

    try:
        objective = LDA(X, y, r)
    except ParameterError as exc:
        if exc.param == "r":
            raise exc.renamed("n_components") from None
        raise
"""

from __future__ import annotations


class ParameterError(ValueError):
    """A bad value of the parameter ``param``; ``reason`` says what is wrong and how to fix it.

    Examples
    --------
    >>> err = ParameterError("r", "must be an integer with 1 <= r < d = 4, got 7")
    >>> str(err), err.param
    ('r: must be an integer with 1 <= r < d = 4, got 7', 'r')
    >>> str(err.renamed("n_components"))
    'n_components: must be an integer with 1 <= r < d = 4, got 7'
    """

    def __init__(self, param: str, reason: str):
        self.param = param
        self.reason = reason
        super().__init__(f"{param}: {reason}")

    def renamed(self, param: str) -> ParameterError:
        """The same error about the same value, under the caller's name for the parameter."""
        return ParameterError(param, self.reason)

    def __reduce__(self):  # pickles (Dask workers, joblib) with both fields
        return type(self), (self.param, self.reason)


class UnboundedObjective(ParameterError):
    """The data make the objective unbounded at the requested dimension, so it has no maximum
    for a solver to find (WDA with at least r directions of no within-class spread); the
    estimator of the method gives its answer there without a solver (``WassersteinDA``'s
    null-space answer).  ``n_null_directions`` counts the directions."""

    def __init__(self, param: str, reason: str, n_null_directions: int = 0):
        super().__init__(param, reason)
        self.n_null_directions = n_null_directions

    def __reduce__(self):
        return type(self), (self.param, self.reason, self.n_null_directions)


class ChunkError(RuntimeError):
    """Computing one chunk of a chunked input (a block of a Dask array) failed: ``param``
    names the input, ``chunk`` the block's index along the rows and ``rows`` its first and
    last row (None where the chunk sizes are unknown); the chunk's own exception is chained
    (``__cause__``) and quoted.

    >>> err = ChunkError("X", 3, (30, 39), "OSError: disk gone")
    >>> str(err)
    'X: chunk 3 (rows 30..39) failed: OSError: disk gone'
    """

    def __init__(self, param: str, chunk: int, rows: tuple[int, int] | None, what: str):
        self.param = param
        self.chunk = chunk
        self.rows = rows
        self.what = what
        where = "" if rows is None else f" (rows {rows[0]}..{rows[1]})"
        super().__init__(f"{param}: chunk {chunk}{where} failed: {what}")

    def __reduce__(self):
        return type(self), (self.param, self.chunk, self.rows, self.what)


class BudgetExceeded(RuntimeError):
    """A run's time budget (``max_time`` of :func:`ldr.solve`) ran out before an oracle call
    that would have overrun it (``ldr.core.problem.Problem.deadline``).  Inside a run the
    driver catches it and ends the run, not converged, at its last iterate; it reaches the
    caller only when the budget ran out before the first iterate existed (computing the start
    point took it all)."""
