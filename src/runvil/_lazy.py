"""Public names that load their module on first use.

``import runvil`` must stay cheap (no HTTP stack, HTML parser, Lua runtime or MCP SDK:
docs/benchmarks.md, "Startup"), yet ``from runvil import Host`` must work. Each public package
lists its names and the private module each lives in, and hands the list to
:func:`lazy_exports`, which gives it the module ``__getattr__`` (PEP 562) that imports on first
use and the ``__dir__`` that shows the names before they are loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose ``namespace`` (its
    ``globals()``) gains each name of ``exports`` (name -> module) when first looked up."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
