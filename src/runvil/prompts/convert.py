"""Values crossing between Lua and Python, and the JSON mapping built on them.

Lua has one table type for arrays and objects, two number subtypes and no null, so every crossing
needs rules. These are the rules, chosen so that nothing is guessed:

* ``5`` stays an integer and ``5.0`` a float (Lua 5.4 keeps the subtypes; JSON keeps them too).
* A table is a JSON array when it carries the ``json.array`` marker or its keys are exactly the
  integers ``1..n``; it is an object when every key is a string. ``{}`` is an object: write
  ``json.array()`` for an empty array. Anything else (``{1, nil, 3}``, ``{1, x = 2}``, a float
  key) is an error rather than a guess.
* ``json.null`` is a unique sentinel; decoding maps JSON ``null`` to it so nulls survive.
* Object keys are sorted when encoding, because Lua's table order changes from run to run.

The walk over a Lua table runs on the Lua thread inside a host callback (lupa's runtime lock is
held), and asks the Lua-side ``classify`` helper about each table, because only Lua can read a
protected metatable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from lupa import lua54

__all__ = ["MAX_DEPTH", "ConversionError", "LuaValues"]

#: Deeper structures are refused: they are almost always a cycle, and Python recursion is finite.
MAX_DEPTH = 64


class ConversionError(Exception):
    """A value cannot cross: the message says why, in the user's terms."""


class LuaValues:
    """Converts between Lua values and JSON-shaped Python values for one Lua runtime."""

    def __init__(
        self,
        runtime: Any,
        classify: Callable[[Any], Any],
        mark_array: Callable[[Any], Any],
        null: Any,
    ) -> None:
        self._rt = runtime
        self._classify = classify
        self._mark_array = mark_array
        self._null = null

    # -- Lua -> Python -------------------------------------------------------------------------

    def to_python(self, value: Any, what: str = "value", depth: int = 0) -> Any:
        """A JSON-shaped Python copy of a Lua value (``None`` for ``nil`` and ``json.null``)."""
        kind = lua54.lua_type(value)
        if kind is None:
            if isinstance(value, float) and not math.isfinite(value):
                raise ConversionError(f"cannot encode {_lua_number(value)} in JSON")
            if isinstance(value, bytes):
                raise ConversionError("strings must be valid UTF-8")
            return value
        if kind != "table":
            raise ConversionError(f"cannot encode a {kind} in JSON")
        if depth >= MAX_DEPTH:
            raise ConversionError(f"tables nested deeper than {MAX_DEPTH} levels (a cycle?)")
        shape, detail = self._classify(value)
        if shape == "null":
            return None
        if shape == "array":
            return [self.to_python(value[i], what, depth + 1) for i in range(1, int(detail) + 1)]
        if shape == "object":
            out: dict[str, Any] = {}
            for key, item in value.items():
                out[str(key)] = self.to_python(item, what, depth + 1)
            return out
        if shape == "tool":
            raise ConversionError("cannot encode a Tool object in JSON")
        if shape == "badkey":
            raise ConversionError(f"object keys must be strings, not {detail} keys")
        raise ConversionError(
            "a table mixes array items and string keys, or has holes; "
            "use only 1..n or only string keys"
        )

    # -- Python -> Lua -------------------------------------------------------------------------

    def to_lua(self, value: Any, depth: int = 0) -> Any:
        """A Lua copy of a JSON-shaped Python value (arrays carry the ``json.array`` marker)."""
        if value is None:
            return self._null
        if isinstance(value, bool | int | float | str):
            return value
        if depth >= MAX_DEPTH:
            raise ConversionError(f"JSON nested deeper than {MAX_DEPTH} levels")
        table = self._rt.table()
        if isinstance(value, list | tuple):
            for i, item in enumerate(value, start=1):
                table[i] = self.to_lua(item, depth + 1)
            return self._mark_array(table)
        if isinstance(value, dict):
            for key, item in value.items():
                table[str(key)] = self.to_lua(item, depth + 1)
            return table
        raise ConversionError(f"cannot convert a {type(value).__name__}")

    # -- JSON ------------------------------------------------------------------------------------

    def encode(self, value: Any) -> str:
        """``json.encode``: compact JSON with sorted keys, non-ASCII kept as is."""
        data = self.to_python(value)
        return json.dumps(  # depth is bounded by to_python, so dumps cannot recurse too deep
            data, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
        )

    def decode(self, text: str) -> Any:
        """``json.decode``: integers stay integers (beyond int64 they become floats)."""
        try:
            data = json.loads(text, parse_int=_parse_int, parse_constant=_no_constant)
        except ValueError as err:
            raise ConversionError(_json_problem(err)) from None
        except RecursionError:
            raise ConversionError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
        return self.to_lua(data)


def _parse_int(text: str) -> int | float:
    number = int(text)
    return number if -(2**63) <= number < 2**63 else float(number)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _json_problem(err: ValueError) -> str:
    if isinstance(err, json.JSONDecodeError):
        return f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg.lower()}"
    return f"invalid JSON: {err}"


def _lua_number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "inf" if value > 0 else "-inf"
