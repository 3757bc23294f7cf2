"""The Lua source files shipped inside the package (``prelude.lua``, ``patterns.lua``).

They are package data, declared in ``pyproject.toml``, so an installed wheel carries them next to
this module; :func:`lua_source` reads each one once per process and keeps the text.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["lua_source"]


@cache
def lua_source(name: str) -> str:
    """The text of the Lua file ``name`` in this package, read on first use and then cached."""
    return resources.files("runvil.prompts").joinpath(name).read_text(encoding="utf-8")
