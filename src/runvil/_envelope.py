"""The untrusted envelope: how third-party text is marked before it reaches a model or a prompt.

Everything ``web/fetch`` and ``web/search`` bring back was written by a stranger, and some of it
is written *for* the model ("ignore your previous instructions"). The envelope cannot make prompt
injection impossible; it makes the boundary exact and unforgeable, so a model (and a reader of the
transcript) always knows where third-party text starts and ends::

    <untrusted_input_{nonce}>
    {escaped text}
    </untrusted_input_{nonce}>

``{nonce}`` is 16 lowercase hex characters drawn once per run (one MCP session is one run), so a
page cannot guess it in advance. Escaping runs in this order, and each step keeps the ones before
it intact:

1. every ``<`` becomes ``&lt;``, so no text can write an opening or closing tag at all;
2. every copy of the run's nonce (overlapping copies included) gets a space after its 8th
   character, so a page that learned the nonce (say, from an earlier result it was shown) still
   cannot echo it back;
3. Mistral-style control markup (``[INST]``, ``[/INST]`` ...) gets a space after its ``[``, so a
   page cannot open a fake instruction turn in templates that read those as special tokens.

None of the three steps can create a match for a later (or earlier) one: they only insert spaces
or replace ``<`` by characters that are neither hex digits nor brackets.

The layout is fixed so that the seeds' Lua pattern ``'\\n\\n(.*)\\n</untrusted_input_%x+>$'`` cuts
the body out of every successful fetch result (its provenance header holds no blank line), and
``'<untrusted_input_%x+>\\n(.*)\\n</untrusted_input_%x+>$'`` cuts out any enveloped text.

This module is pure: the host decides *when* text is enveloped (where a result leaves the host:
``tools.call``, the model loop, MCP); the library-level tools return bare text.
"""

from __future__ import annotations

import re
import secrets

__all__ = ["CONTROL_MARKUP", "envelope", "escape", "is_nonce", "new_nonce", "unwrap"]

#: Chat-template control markup that gets a space after its ``[`` inside the envelope.
CONTROL_MARKUP: tuple[str, ...] = (
    "[INST]",
    "[/INST]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CALLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
)

_NONCE = re.compile(r"[0-9a-f]{16}")
_UNWRAP = re.compile(r"<untrusted_input_([0-9a-f]{16})>\n(.*)\n</untrusted_input_\1>", re.S)


def new_nonce() -> str:
    """A fresh nonce: 16 lowercase hex characters from the system's secure random source."""
    return secrets.token_hex(8)


def is_nonce(value: object) -> bool:
    """Whether ``value`` is a well-formed nonce (exactly 16 lowercase hex characters)."""
    return isinstance(value, str) and _NONCE.fullmatch(value) is not None


def escape(text: str, nonce: str) -> str:
    """The escaped copy of ``text`` that goes inside an envelope with ``nonce``.

    Every step is a ``str.replace`` (one C pass, no object per match), so escaping costs time and
    memory linear in the text with small constants, whatever it holds: a prompt may envelope tens
    of megabytes. The markup tokens are bracketed and hold no bracket, so no two occurrences can
    overlap and replacing them one token at a time equals one pass over all of them.
    """
    text = text.replace("<", "&lt;")
    text = _break_nonce(text, nonce)
    for token in CONTROL_MARKUP:
        text = text.replace(token, "[ " + token[1:])
    return text


def _periodic(nonce: str) -> bool:
    """Whether two copies of ``nonce`` can overlap (it repeats with a period under its length).
    A drawn nonce almost never does; a pinned one such as ``"a" * 16`` does."""
    return any(nonce[shift:] == nonce[:-shift] for shift in range(1, len(nonce)))


def _break_nonce(text: str, nonce: str) -> str:
    """Put a space after the 8th character of every copy of ``nonce``, overlapping copies
    included. A plain ``str.replace`` is not enough for a periodic nonce: in 24 ``a``s with nonce
    ``a`` * 16 the replaced copy's tail and the next 8 ``a``s would form a fresh copy. Breaking
    every copy found in the original text leaves none: any 16 characters without an inserted
    space are 16 original ones, and had they spelled the nonce they would hold a space."""
    if not _periodic(nonce):  # copies cannot overlap, so one replace breaks every copy
        return text.replace(nonce, nonce[:8] + " " + nonce[8:])
    cuts = [match.start() + 8 for match in re.finditer(f"(?={re.escape(nonce)})", text)]
    if not cuts:
        return text
    pieces: list[str] = []
    last = 0
    for cut in cuts:
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    return " ".join(pieces)


def envelope(text: str, nonce: str) -> str:
    """Wrap ``text`` in the untrusted envelope for ``nonce``, escaping it first.

    Raises ``ValueError`` for a malformed nonce: an envelope whose nonce is not 16 lowercase hex
    characters would silently break every consumer's pattern.
    """
    if not is_nonce(nonce):
        raise ValueError("an envelope nonce is 16 lowercase hex characters")
    return f"<untrusted_input_{nonce}>\n{escape(text, nonce)}\n</untrusted_input_{nonce}>"


def unwrap(enveloped: str) -> str | None:
    """The escaped text inside an envelope, or ``None`` if ``enveloped`` is not exactly one
    envelope. The escapes are *not* undone: what was escaped stays escaped."""
    match = _UNWRAP.fullmatch(enveloped)
    return match.group(2) if match else None
