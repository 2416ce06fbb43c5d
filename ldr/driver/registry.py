"""One registry of ldr's methods: what the command line, ``LinearDR`` and the docs read.

A method is an objective class that declares a :class:`~ldr.core.objective.Method` in its body
(``method = Method("lda", "orthogonal LDA", supervised=True, ...)``): its command-line name,
whether it needs labels, how it is built from data, which command-line options it takes and
whether it reads its rows in chunks.  Its default solver is the class's ``default_solver``
(:func:`ldr.driver.loop.default_solver`).  The registry lists every class of
:mod:`ldr.objectives` that declares one, so adding a method is one module in ``objectives/``
(and its tests); ``tests/test_registry.py`` checks that each is reachable from the command
line, from ``LinearDR`` and from the docs.

>>> from ldr.driver import registry
>>> registry.get("lda").__name__, registry.get("LDA").method.supervised
('LDA', True)
>>> "pca" in registry.names(chunked=True), "wda" in registry.names(chunked=True)
(True, False)
"""

from __future__ import annotations

import numpy as np

from ldr import objectives
from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective, declared_method
from ldr.driver.loop import default_solver

#: objectives of :mod:`ldr.objectives` that are not built from data, with the reason
NOT_METHODS = {
    "QuotientOfTraces": "a quotient of traces of two given matrices (A, B), not a method "
                        "built from data; LDA, MAF, LPP and NPE are its data methods",
}


def _collect() -> dict[str, type[Objective]]:
    found: dict[str, type[Objective]] = {}
    for name in objectives.__all__:
        cls = getattr(objectives, name)
        method = declared_method(cls)
        if method is None:
            continue
        if method.name in found:
            raise RuntimeError(f"two objectives declare the method {method.name!r}: "
                               f"{found[method.name].__name__} and {name}")
        found[method.name] = cls
    return dict(sorted(found.items()))


#: method name → objective class
METHODS: dict[str, type[Objective]] = _collect()


def names(*, supervised: bool | None = None, chunked: bool | None = None) -> list[str]:
    """The registered method names, optionally only the (un)supervised or chunk-reading
    ones."""
    out = []
    for name, cls in METHODS.items():
        m = cls.method
        if supervised is not None and m.supervised != supervised:
            continue
        if chunked is not None and m.chunked != chunked:
            continue
        out.append(name)
    return out


def get(name: str) -> type[Objective]:
    """The objective class of a method, by its name (``"lda"``) or its class name (``"LDA"``)."""
    if not isinstance(name, str):
        raise ParameterError("method", f"expected a method name, got {name!r}")
    if name in METHODS:
        return METHODS[name]
    for cls in METHODS.values():
        if cls.__name__ == name:
            return cls
    known = ", ".join(f"{k} ({c.__name__})" for k, c in METHODS.items())
    raise ParameterError("method", f"no method named {name!r}; the methods are {known}")


def method(name_or_class) -> Method:
    """The :class:`~ldr.core.objective.Method` of a registered method (name or class)."""
    cls = get(name_or_class) if isinstance(name_or_class, str) else name_or_class
    m = declared_method(cls)
    if m is None:
        raise ParameterError("method", f"{cls.__name__} declares no Method")
    return m


def build(cls: type[Objective], X, y, r: int, **options) -> Objective:
    """``cls`` built from data: ``build(X, y, r, **options)`` (``y`` left out for an
    unsupervised method), with its ``Method.build`` classmethod or its constructor."""
    m = cls.method
    factory = cls if m is None or m.build is None else getattr(cls, m.build)
    supervised = m.supervised if m is not None else y is not None
    return factory(X, y, r, **options) if supervised else factory(X, r, **options)


def from_table(name: str, X, y, r: int, **options) -> Objective:
    """The objective that ``ldr compare --method name`` builds from a table's rows ``X`` and
    class labels ``y``: the method's ``preset`` keywords, ``options`` given by their
    command-line names (``reg=0.1`` is RRR's ``alpha``), and the labels turned into ``y`` as
    ``Method.labels`` says (one-hot, or indicators of all classes but the last).

    >>> import ldr
    >>> X, y = ldr.datasets.load("iris")
    >>> from_table("rrr", X, y, 2, reg=0.1).alpha
    0.1
    """
    cls = get(name)
    m = cls.method
    for option in options:
        if option not in m.options:
            raise ParameterError(option, f"the {m.name} method does not use it; it takes "
                                         f"{', '.join(m.options) or 'no options'}")
    if m.labels is not None and y is not None:
        classes, codes = np.unique(np.asarray(y), return_inverse=True)
        y = np.eye(classes.size)[codes.reshape(-1)]
        if m.labels == "indicators":
            y = y[:, :-1]
    kwargs = {**m.preset, **{m.options[o]: v for o, v in options.items()}}
    return build(cls, X, y, r, **kwargs)


def table() -> list[dict]:
    """One row per method, for the docs and ``ldr compare --help``: name, objective class,
    summary, supervised, chunked (reads its rows in chunks) and default solver."""
    rows = []
    for name, cls in METHODS.items():
        m = cls.method
        solver = default_solver(cls)
        if not isinstance(solver, str):
            solver = " → ".join(solver)
        rows.append({"method": name, "objective": cls.__name__, "summary": m.summary,
                     "supervised": m.supervised, "chunked": m.chunked, "solver": solver})
    return rows


def rst_table() -> str:
    """:func:`table` as a reStructuredText list-table (the docs' method table)."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 8 18 44 8 8 14", "",
             "   * - method", "     - objective", "     - summary", "     - labels",
             "     - chunks", "     - default solver"]
    for row in table():
        lines += [f"   * - ``{row['method']}``",
                  f"     - :class:`~ldr.objectives.{row['objective']}`",
                  f"     - {row['summary']}",
                  f"     - {'yes' if row['supervised'] else 'no'}",
                  f"     - {'yes' if row['chunked'] else 'no'}",
                  f"     - {row['solver']}"]
    return "\n".join(lines) + "\n"

