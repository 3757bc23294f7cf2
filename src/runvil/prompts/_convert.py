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

Every crossing is bounded by the run's :class:`~runvil.prompts._budget.LuaBudget`: a Lua value
leaving for Python is counted as it is copied and may not exceed the budget's allowance (a table
that holds the same subtable many times is stored once in Lua but copied once per reference); JSON
text is priced by a scan before Python parses it; tables built for Lua check the state's usage and
the run's stop flag every few hundred items.
"""

from __future__ import annotations

import json
import math
import operator
import sys
from array import array
from collections.abc import Callable
from functools import partial
from itertools import accumulate, compress
from typing import Any

from lupa import lua54

from runvil.prompts._budget import POLL_EVERY, LuaBudget

__all__ = ["MAX_DEPTH", "ConversionError", "LuaValues"]

#: Deeper structures are refused: they are almost always a cycle, and Python recursion is finite.
MAX_DEPTH = 64

#: Python memory per character of JSON text is at most about this (``[{},{},...]``: a 64-byte
#: dict and a list slot per 3 characters); shorter texts are parsed without a scan.
_JSON_FANOUT = 32
#: Values that cross into Lua as they are (numbers live in a table's slot).
_NUMBERS = frozenset((int, float, bool))
#: Strings above this many characters are priced one by one when they cross into Lua.
_BIG_STRING = 4096
#: Byte tables for :func:`_json_cost`: the characters of numbers and literals, everything but
#: the structural tokens, quotes as 1, brackets as +1/-1 levels; and its pass size between polls.
_SCAN_CHUNK = 1 << 22
_VALUE_CHARS = b"0123456789-.eEtrufalsn"
_NOT_TOKEN = bytes(set(range(256)) - set(b'"[]{},:'))
_QUOTE = bytes(int(b == ord('"')) for b in range(256))
_LEVEL = bytes(1 if b in b"[{" else 255 if b in b"]}" else 0 for b in range(256))
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
#: Characters ``json.dumps`` writes as six-character ``\u00XX`` escapes (or two-character ones).
_CONTROL_BYTES = bytes(range(32))


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
        budget: LuaBudget,
    ) -> None:
        self._rt = runtime
        self._classify = classify
        self._mark_array = mark_array
        self._null = null
        self._budget = budget
        self._spent = 0  # Python-side bytes of the conversion under way (Lua -> Python)
        self._text = 0  # and the least number of characters its JSON text will have
        self._built = 0  # items of the conversion under way, either way

    # -- Lua -> Python -------------------------------------------------------------------------

    def to_python(self, value: Any) -> Any:
        """A JSON-shaped Python copy of a Lua value (``None`` for ``nil`` and ``json.null``).

        The copy's size is counted as it is made (a string by its Python size, a table by its
        slots) and may not exceed the budget's allowance; so is the least length of its JSON
        text, which :meth:`encode` checks before it writes the text. The walk runs no hook (the
        ``classify`` helper runs on lupa's main Lua thread), so it looks at the run's stop flag
        every :data:`~runvil.prompts._budget.POLL_EVERY` items itself."""
        self._spent = 0
        self._text = 0
        self._built = 0
        return self._to_python(value, 0)

    def _charge(self, size: int, text: int = 1) -> None:
        self._spent += size
        self._text += text
        if self._spent > self._budget.allowance:
            self._budget.within_allowance(self._spent)
        self._count()

    def _charge_string(self, value: str, extra: int = 0) -> None:
        escaped = _escaped_length(value)
        self._charge(sys.getsizeof(value) + extra + escaped - len(value), escaped + 2)

    def _to_python(self, value: Any, depth: int) -> Any:
        kind = lua54.lua_type(value)
        if kind is None:
            if isinstance(value, str):
                self._charge_string(value)
            elif isinstance(value, float) and not math.isfinite(value):
                raise ConversionError(f"cannot encode {_lua_number(value)} in JSON")
            elif isinstance(value, bytes):
                raise ConversionError("strings must be valid UTF-8")
            else:
                self._charge(32)
            return value
        if kind != "table":
            raise ConversionError(f"cannot encode a {kind} in JSON")
        if depth >= MAX_DEPTH:
            raise ConversionError(f"tables nested deeper than {MAX_DEPTH} levels (a cycle?)")
        shape, detail = self._classify(value)
        if shape == "null":
            return None
        if shape == "array":
            count = int(detail)
            self._charge(64 + 16 * count, 1 + count)
            return [self._to_python(value[i], depth + 1) for i in range(1, count + 1)]
        if shape == "object":
            self._charge(64, 2)
            out: dict[str, Any] = {}
            for key, item in value.items():
                name = str(key)
                self._charge_string(name, 48)
                out[name] = self._to_python(item, depth + 1)
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

    def to_lua(self, value: Any) -> Any:
        """A Lua copy of a JSON-shaped Python value (arrays carry the ``json.array`` marker).

        Built with the limit disarmed (inside a host call), so it checks the state's usage and
        the run's stop flag every :data:`~runvil.prompts._budget.POLL_EVERY` items and prices
        each long string before it is pushed."""
        self._built = 0
        return self._to_lua(value, 0)

    def _to_lua(self, value: Any, depth: int) -> Any:
        if value is None:
            return self._null
        if type(value) in _NUMBERS:
            return value
        if isinstance(value, str):
            return self._budget.admit_string(value) if len(value) > _BIG_STRING else value
        if depth >= MAX_DEPTH:
            raise ConversionError(f"JSON nested deeper than {MAX_DEPTH} levels")
        table = self._rt.table()
        if isinstance(value, list | tuple):
            for i, item in enumerate(value, start=1):
                self._count()
                table[i] = item if type(item) in _NUMBERS else self._to_lua(item, depth + 1)
            return self._mark_array(table)
        if isinstance(value, dict):
            for key, item in value.items():
                self._count()
                table[self._to_lua(str(key), depth + 1)] = self._to_lua(item, depth + 1)
            return table
        raise ConversionError(f"cannot convert a {type(value).__name__}")

    def _count(self) -> None:
        """One more item built; every :data:`POLL_EVERY` items, look at the budget."""
        self._built += 1
        if not self._built % POLL_EVERY:
            self._budget.poll()

    # -- JSON ------------------------------------------------------------------------------------

    def encode(self, value: Any, *, room: int | None = None) -> str:
        """``json.encode``: compact JSON with sorted keys, non-ASCII kept as is.

        A text that cannot be shorter than ``room`` characters (by default what the Lua state
        has left, since the text is going back into it) ends the run before it is written."""
        data = self.to_python(value)
        self._budget.admit_text(self._text, room)
        return json.dumps(  # depth is bounded by to_python, so dumps cannot recurse too deep
            data, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
        )

    def decode(self, text: str) -> Any:
        """``json.decode``: integers stay integers (beyond int64 they become floats).

        A long text is priced before it is parsed, so that neither Python nor Lua builds what
        the run could not hold (:func:`_json_cost`)."""
        budget = self._budget
        if len(text) * _JSON_FANOUT > min(budget.remaining(), budget.allowance):
            lua_bytes, python_bytes = _json_cost(text, budget.poll)
            budget.admit(lua_bytes)
            budget.within_allowance(python_bytes)
        try:
            data = json.loads(text, parse_int=_parse_int, parse_constant=_no_constant)
        except ValueError as err:
            raise ConversionError(_json_problem(err)) from None
        except RecursionError:
            raise ConversionError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
        return self.to_lua(data)


def _escaped_length(text: str) -> int:
    """The length of ``text`` once JSON-escaped (``"`` and ``\\`` take two characters, control
    characters two or six), counted in C without writing the escaped copy."""
    length = len(text) + text.count('"') + text.count("\\")
    if not text.isprintable():
        data = text.encode("utf-8", "surrogatepass")  # control characters are single bytes
        length += 5 * (len(data) - len(data.translate(None, _CONTROL_BYTES)))
    return length


def _json_cost(text: str, poll: Callable[[], None]) -> tuple[int, int]:
    """What parsing ``text`` will cost: at least this many bytes in Lua, about this many in
    Python. Raises the depth error for a text nested deeper than :data:`MAX_DEPTH` (it would be
    refused after parsing anyway, and its brackets beyond that depth never become tables).

    A few passes in C, with no object per token (a regex substitution would make one for every
    gap between two strings): escaped backslashes and quotes are cut out, so every remaining
    quote delimits a string; everything but quotes, brackets, commas and colons is dropped; a
    running XOR of the quotes marks the tokens inside strings, and the rest are counted. The
    transient copies take a few times the text's size, and the passes over tokens go in chunks
    with ``poll()`` between them, so that a deadline or a cancellation is not held up."""
    data = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")
    tokens = data.translate(None, _NOT_TOKEN)
    outside = _outside_strings(tokens, poll)
    strings = tokens.count(b'"') // 2
    del tokens
    _check_depth(outside.translate(_LEVEL, _NOT_BRACKET), poll)
    objects = outside.count(b"{")
    containers = objects + outside.count(b"[")
    colons = outside.count(b":")
    # Empty containers, counted in the whole text (inside strings too, so at most too many,
    # which only lowers the estimates below).
    empty_objects = min(objects, data.count(b"{}"))
    empty = min(containers, empty_objects + data.count(b"[]"))
    items = outside.count(b",") + containers - empty
    scalars = max(0, items - containers - strings)
    scalar_chars = len(data) - len(data.translate(None, _VALUE_CHARS))
    # Lua 5.4: a table is 56 bytes and an array slot 16. Object members are left out (a key may
    # repeat, and a repeated key takes one slot), and so are strings: short ones are interned
    # (repeats cost nothing), long ones are priced one by one as they cross.
    lua = 56 * containers + 16 * max(0, items - colons)
    # CPython: a list is 56 bytes and 8 per item, a dict 64 (184 with a key) and about 40 per
    # key, a string 50 plus its characters, a number up to 32 (small integers are shared).
    python = (
        64 * containers
        + 120 * (objects - empty_objects)
        + 8 * items
        + 40 * colons
        + 50 * strings
        + min(32 * scalars, 8 * scalar_chars)
        + (1 if text.isascii() else 4) * len(text)
    )
    return lua, python


def _outside_strings(tokens: bytes, poll: Callable[[], None]) -> bytes:
    """The tokens that lie outside string literals (every quote in ``tokens`` delimits one)."""
    parts: list[bytes] = []
    parity = 0
    for start in range(0, len(tokens), _SCAN_CHUNK):
        chunk = tokens[start : start + _SCAN_CHUNK]
        inside = accumulate(chunk.translate(_QUOTE), operator.xor, initial=parity)
        next(inside)  # the parity before the chunk
        parts.append(bytes(compress(chunk, map(operator.not_, inside))))
        parity ^= chunk.count(b'"') & 1
        poll()
    return b"".join(parts)


def _check_depth(levels: bytes, poll: Callable[[], None]) -> None:
    """Raise the depth error if the running sum of ``levels`` (+1 or -1 each) passes
    :data:`MAX_DEPTH`."""
    depth = 0
    too_deep = partial(operator.lt, MAX_DEPTH)
    for start in range(0, len(levels), _SCAN_CHUNK):
        steps = array("b", levels[start : start + _SCAN_CHUNK])
        if next(filter(too_deep, accumulate(steps, initial=depth)), None) is not None:
            raise ConversionError(f"JSON nested deeper than {MAX_DEPTH} levels")
        depth += sum(steps)
        poll()


def _parse_int(text: str) -> int | float:
    number = int(text)
    if -(2**63) <= number < 2**63:
        return number
    try:
        return float(number)
    except OverflowError:  # past the largest float, like JSON's 1e999
        return math.inf if number > 0 else -math.inf


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
