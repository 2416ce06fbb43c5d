"""Renamed parameters: an old name keeps working for one release and warns.

ldr speaks one vocabulary on every floor (``ldr.solve``, ``ldr.compare``, ``ldr.check``,
``ldr.certificate``, the objectives and the estimators): ``start`` for the start point,
``random_state`` for the seed, ``tol`` for the gradient tolerance, ``max_iter`` for the
iteration budget of the whole run.  A name of an earlier release is accepted as a keyword
argument, mapped to its new name, and announced with a :class:`FutureWarning`.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["renamed_keywords", "user_stacklevel", "warn_renamed"]


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning raised by the caller of this function point
    at the first frame outside the ``ldr`` package: the user's line, however deep inside
    ldr the warning is raised."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "ldr":
        frame = frame.f_back
        level += 1
    return level


def warn_renamed(where: str, old: str, new: str, stacklevel: int | None = None) -> None:
    """Announce that ``where``'s parameter ``old`` is now called ``new`` (the warning points
    at the user's line)."""
    warnings.warn(f"{where}: the parameter {old!r} is deprecated and will be removed in the "
                  f"next release; pass {new}= instead", FutureWarning,
                  stacklevel=user_stacklevel() if stacklevel is None else stacklevel)


def renamed_keywords(where: str, given: dict, renames: dict, new_values: dict) -> dict:
    """``new_values`` updated with the old names found in ``given``.

    Parameters
    ----------
    where : str
        The callable's name, for the messages (``"ldr.solve"``).
    given : dict
        The extra keyword arguments the callable received.
    renames : dict
        Old name → new name.
    new_values : dict
        The new names' values as passed (the callable's defaults where not passed).

    Returns
    -------
    dict
        ``new_values`` with each old name's value under its new name.

    Raises
    ------
    TypeError
        A keyword that is neither a parameter nor an old name (as Python raises), or an old
        name given together with its new name.
    """
    out = dict(new_values)
    for old, value in given.items():
        if old not in renames:
            raise TypeError(f"{where}() got an unexpected keyword argument {old!r}")
        new = renames[old]
        warn_renamed(where, old, new)
        out[new] = value
    both = [old for old in given if renames[old] in given]
    if both:
        raise TypeError(f"{where}() got both {both[0]!r} and its new name "
                        f"{renames[both[0]]!r}")
    return out


def was_given(old_value) -> bool:
    """Whether a former parameter name, whose default is the string ``"deprecated"``, was
    passed a value."""
    return not (isinstance(old_value, str) and old_value == "deprecated")


def renamed_value(where: str, old: str, new: str, old_value, value):
    """``value``, or ``old_value`` with a FutureWarning where the caller passed the former
    name ``old`` (whose default is the string ``"deprecated"``)."""
    if not was_given(old_value):
        return value
    warn_renamed(where, old, new)
    return old_value
