"""Public objects name the public module that exports them, not the private one defining them.

``gbnfkit.Grammar`` is defined in ``gbnfkit._grammar``; :func:`publish` sets its
``__module__`` to ``"gbnfkit"`` so reprs, tracebacks, documentation and pickles show the
name users import.  A package calls it at the end of its ``__init__`` for the names of its
``__all__``; the top-level package runs last, so the shallowest public name wins.

Renaming ``__module__`` would break :func:`typing.get_type_hints` (which evaluates string
annotations in the globals of ``__module__``), so the annotations of each renamed class are
evaluated first, in the globals of the module that defines them; an annotation that cannot
be evaluated there (a name imported only for type checkers) is left as it was.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable, Mapping

__all__ = ["publish", "publish_loaded"]


def publish(module: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """Set ``__module__`` to ``module`` on the classes and functions ``names`` of ``namespace``."""
    for name in names:
        obj = namespace[name]
        if not (isinstance(obj, type) or inspect.isfunction(obj)):
            continue
        if not getattr(obj, "__module__", "").startswith("gbnfkit"):
            continue
        if isinstance(obj, type):
            for klass in obj.__mro__:
                if klass.__module__.startswith("gbnfkit"):
                    _evaluate_annotations(klass)
        obj.__module__ = module


def _evaluate_annotations(klass: type) -> None:
    own = klass.__dict__.get("__annotations__")
    if not own or not any(isinstance(v, str) for v in own.values()):
        return
    defining = sys.modules.get(klass.__module__)
    if defining is None:
        return
    globalns = dict(vars(defining))
    localns = dict(vars(klass))
    resolved: dict[str, object] = {}
    for key, value in own.items():
        if isinstance(value, str):
            try:
                value = eval(value, globalns, localns)  # noqa: S307 - the package's own annotations
            except Exception:  # noqa: BLE001 - a name known only to type checkers: keep the text
                pass
        resolved[key] = value
    klass.__annotations__ = resolved


def publish_loaded(top: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """:func:`publish` the ``__all__`` of every public subpackage of ``top`` loaded so far,
    deepest first, then ``names`` of ``top`` itself."""
    loaded = [
        mod
        for key, mod in list(sys.modules.items())
        if key.startswith(top + ".")
        and not any(part.startswith("_") for part in key.split("."))
        and hasattr(mod, "__all__")
    ]
    for mod in sorted(loaded, key=lambda m: -m.__name__.count(".")):
        publish(mod.__name__, vars(mod), mod.__all__)
    publish(top, namespace, names)
