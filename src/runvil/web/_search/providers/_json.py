"""The one JSON reader of every search provider: a vendor's body, its depth bounded first.

Python's ``json`` parser recurses once per level of nesting, so an answer nested 200,000 deep
raised ``RecursionError``, which no provider expected: the tool's catch-all logged it with a
traceback as an unexpected failure. Every provider body (results and error envelopes alike) is
read here instead, and its nesting is measured before it is parsed, in one linear pass that
never recurses: strings are cut out (a bracket inside a string does not nest), the brackets
left are counted. A body deeper than :data:`MAX_JSON_DEPTH` is not JSON a provider can mean,
so it is the same ``ValueError`` as any body that is not JSON, and each provider answers it
with its own ``malformed search response`` (or, for an error body, its usual quote).
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "decode_json", "decode_json_text"]

#: Arrays and objects nested deeper than this are refused. The deepest vendor answer (Brave's
#: result rows with their ``deep_results`` buttons) is seven levels; a prompt's ``json.decode``
#: draws its line at the same 64.
MAX_JSON_DEPTH = 64

#: A JSON string, escapes included (the unrolled loop: no backtracking, no recursion).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
#: Everything that is not a bracket, once the strings are gone.
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def decode_json(body: bytes | None) -> Any:
    """Parse a UTF-8 JSON body; ``ValueError`` when it is missing, not UTF-8, not JSON, or
    nested deeper than :data:`MAX_JSON_DEPTH`."""
    if body is None:
        raise ValueError("no body")
    return decode_json_text(body.decode("utf-8"))


def decode_json_text(text: str) -> Any:
    """Parse JSON text under the same depth bound as :func:`decode_json`."""
    if _deeper_than(text, MAX_JSON_DEPTH):
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except RecursionError:  # unreachable after the depth check; never a traceback if it is not
        raise ValueError("JSON nested too deep") from None


def _deeper_than(text: str, limit: int) -> bool:
    """Whether the bracket nesting outside strings passes ``limit``; stops at the first bracket
    that does (the running sum, the test and the stop all run in C)."""
    if "[" not in text and "{" not in text:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depths = accumulate(map(_STEP.__getitem__, brackets))
    return next(filter(limit.__lt__, depths), None) is not None


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside strings, an upper bound of the nesting ``json``
    would recurse into (a string left open counts its brackets, which only refuses text that
    is not JSON anyway). Linear in ``text``: two regex passes and one running sum in C."""
    if "[" not in text and "{" not in text:
        return 0
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
