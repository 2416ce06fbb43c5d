"""Objectives, one module per method family (installed as ``ldr.objectives``).

Every objective class in a public module's ``__all__`` is exported here, found by listing the
package: a new method is one new module (and its tests).  Modules whose name starts with
``_`` are private helpers.
An objective that declares a :class:`~ldr.core.objective.Method` is reachable by name from the
command line, ``LinearDR`` and the docs (:mod:`ldr.driver.registry`).
"""

import importlib
import pkgutil

from ldr.core.objective import Objective

__all__: list[str] = []
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
    if _info.name.startswith("_"):
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _name in _module.__all__:
        _value = getattr(_module, _name)
        if isinstance(_value, type) and issubclass(_value, Objective):
            globals()[_name] = _value
            __all__.append(_name)
__all__.sort()
del _info, _module, _name, _value
