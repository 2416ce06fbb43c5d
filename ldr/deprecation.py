"""Renamed parameters: an old name keeps working for one release and warns.

ldr speaks one vocabulary on every floor (``ldr.solve``, ``ldr.compare``, ``ldr.check``,
``ldr.certificate``, the objectives and the estimators): ``start`` for the start point,
``random_state`` for the seed, ``tol`` for the gradient tolerance, ``max_iter`` for the
iteration budget of the whole run.  A name of an earlier release is accepted as a keyword
argument, mapped to its new name, and announced with a :class:`FutureWarning`.
"""

from __future__ import annotations

import warnings

__all__ = ["renamed_keywords", "warn_renamed"]


def warn_renamed(where: str, old: str, new: str, stacklevel: int = 3) -> None:
    """Announce that ``where``'s parameter ``old`` is now called ``new``."""
    warnings.warn(f"{where}: the parameter {old!r} is deprecated and will be removed in the "
                  f"next release; pass {new}= instead", FutureWarning, stacklevel=stacklevel)


def renamed_keywords(where: str, given: dict, renames: dict, new_values: dict,
                     stacklevel: int = 4) -> dict:
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
        warn_renamed(where, old, new, stacklevel)
        out[new] = value
    both = [old for old in given if renames[old] in given]
    if both:
        raise TypeError(f"{where}() got both {both[0]!r} and its new name "
                        f"{renames[both[0]]!r}")
    return out
