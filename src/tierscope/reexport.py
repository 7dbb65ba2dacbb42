"""A package's front door that imports what it re-exports on first use (PEP 562).

``import tierscope`` and ``tierscope --help`` must not pay for polars, and a TensorFlow task must
not pay for what ``tierscope.trainer`` offers a library user: a package lists its public names and
the module each comes from, and a name is imported when it is first read
(``tierscope.analyze``, ``from tierscope import Dataset``). Standard library only: the trainer's
front door uses it too.
"""

from __future__ import annotations

import importlib
import sys

#: ``typing.TYPE_CHECKING`` without importing typing (2 ms, a third of ``import tierscope``):
#: type checkers take any name ``TYPE_CHECKING`` as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def reexport_lazily(package: str, origins: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for ``package`` (its ``__name__``) that give each name of
    ``origins`` (name -> the module that defines it) from its module, imported on first use and then
    kept in the package's namespace. An unknown name raises :class:`AttributeError`, as a module does.

    A re-exported name must not be a submodule's name too: importing the submodule would set the
    package's attribute to the module, and the function would never be looked up."""

    def __getattr__(name: str) -> Any:
        origin = origins.get(name)
        if origin is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(origin), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *origins})

    return __getattr__, __dir__
