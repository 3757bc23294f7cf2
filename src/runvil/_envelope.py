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
   page cannot open a fake instruction turn in templates that read those as special tokens;
4. invisible characters are written out as ``\\uXXXX`` (:func:`reveal_invisible`): Unicode tag
   characters, bidirectional controls, zero-width characters and stray variation selectors, so a
   page cannot hand a model instructions a person reading the transcript cannot see.

None of the steps can create a match for another one: they only insert spaces, replace ``<`` by
characters that are neither hex digits nor brackets, or replace one character by ``\\u`` and
four uppercase hex digits (never a 16-character run of lowercase hex, never a bracket or ``<``).

**Invisible characters (step 4).** These are written out wherever they stand:

* the tag characters U+E0000-E007F (a whole hidden ASCII alphabet: 28 of them spell "IGNORE
  PREVIOUS INSTRUCTIONS"), except inside the three subdivision flags Unicode recommends for
  emoji (England, Scotland, Wales: U+1F3F4, the tags ``gbeng``/``gbsct``/``gbwls``, U+E007F),
  which are left whole;
* the bidirectional controls U+061C, U+200E, U+200F, U+202A-202E and U+2066-2069, which reorder
  what a reader sees (Trojan Source);
* the zero-width and invisible characters U+180E, U+200B, U+2060-2064, U+206A-206F, U+FEFF and
  U+FFF9-FFFB.

Three kinds of invisible character are needed by real text, so they are left alone exactly in
the place real text puts them, and written out everywhere else:

* ZERO WIDTH JOINER U+200D between two emoji (an emoji, or the U+FE0F or skin-tone modifier that
  ends one, before it; an emoji after it: 👩‍💻, 🏳️‍🌈, 🐈‍⬛), or between two letters or marks of a
  script that uses it to shape or join (below);
* ZERO WIDTH NON-JOINER U+200C between two letters or marks of such a script: Arabic (Persian,
  Urdu, ...), Syriac, Thaana, N'Ko, Samaritan, Mandaic, the Indic scripts from Devanagari to
  Sinhala, Tibetan, Myanmar, Khmer, Mongolian, the Brahmic scripts of U+A840-A8FF and
  U+A980-AA7F and Arabic presentation forms (their letters and marks), Kharoshthi and the
  Brahmic scripts of U+11000-11FFF (any character of those two blocks);
* a variation selector: U+FE00-FE0F right after a visible character (not a variation selector,
  not whitespace, not one of the characters above), U+E0100-E01EF right after a CJK ideograph.
  One selector per character is what a variation sequence is; a run of them (which can carry a
  byte each) is written out after the first.

So what stays hidden is at most one joiner between two letters or emoji and one selector per
character: no alphabet, no reordering. ``\\uXXXX`` is JSON's own escape (a character beyond
U+FFFF is its UTF-16 pair, ``\\uDB40\\uDC49``), so a fetched JSON document or the search tool's
JSON output stays valid JSON whose decoded strings hold exactly the characters the page sent,
while the text a model and a person read shows each one. The whole step is one regular
expression whose every match is a character to write out: linear in the text.

The layout is fixed so that the seeds' Lua pattern ``'\\n\\n(.*)\\n</untrusted_input_%x+>$'`` cuts
the body out of every successful fetch result (its provenance header holds no blank line), and
``'<untrusted_input_%x+>\\n(.*)\\n</untrusted_input_%x+>$'`` cuts out any enveloped text.

This module is pure: the host decides *when* text is enveloped (where a result leaves the host:
``tools.call``, the model loop, MCP); the library-level tools return bare text.
"""

from __future__ import annotations

import functools
import re
import secrets
import unicodedata
from collections.abc import Callable

__all__ = [
    "CONTROL_MARKUP",
    "envelope",
    "escape",
    "is_nonce",
    "new_nonce",
    "reveal_invisible",
    "unwrap",
]

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
    return reveal_invisible(text)


def reveal_invisible(text: str) -> str:
    """``text`` with every invisible character a model must not be handed unseen written out as
    ``\\uXXXX`` (see the module docstring, step 4); everything else unchanged.

    Linear, in two kinds of pass: a regular expression finds the few characters real text needs
    (a recommended flag, a joiner between two emoji or two letters of a joining script, the first
    selector after a character), and between them each run of candidates is written out by
    ``str.translate``, in C, however long the run is.
    """
    if _CANDIDATE.search(text) is None:  # the usual case: one fast scan, no copy
        return text
    kept_pattern, run_pattern, written_out = _rules()
    pieces: list[str] = []
    last = 0
    for kept in kept_pattern.finditer(text):
        start = kept.start()
        if start > last:
            pieces.append(run_pattern.sub(written_out, text[last:start]))
        pieces.append(kept.group())
        last = kept.end()
    pieces.append(run_pattern.sub(written_out, text[last:]))
    return "".join(pieces)


def _json_escape(code: int) -> str:
    """A character as JSON writes it escaped: ``\\uXXXX``, or its UTF-16 pair."""
    if code < 0x10000:
        return f"\\u{code:04X}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"


def _spans_class(spans: tuple[tuple[int, int], ...]) -> str:
    """A regex character class body for the inclusive code point ``spans``."""
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi in spans
    )


def _letters_and_marks(spans: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The runs of letters and marks (Unicode categories L and M) within ``spans`` (a few hundred
    runs; computed on first need)."""
    runs: list[tuple[int, int]] = []
    for lo, hi in spans:
        for code in range(lo, hi + 1):
            if unicodedata.category(chr(code))[0] in "LM":
                if runs and runs[-1][1] == code - 1:
                    runs[-1] = (runs[-1][0], code)
                else:
                    runs.append((code, code))
    return tuple(runs)


#: Written out wherever they stand (tags inside a recommended flag excepted).
_ALWAYS = (
    (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200B), (0x200E, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0xE0000, 0xE007F),
)
_ZWNJ, _ZWJ = ((0x200C, 0x200C),), ((0x200D, 0x200D),)
_SELECTORS = ((0xFE00, 0xFE0F),)
_IDEOGRAPHIC_SELECTORS = ((0xE0100, 0xE01EF),)
_CANDIDATES = _ALWAYS + _ZWNJ + _ZWJ + _SELECTORS + _IDEOGRAPHIC_SELECTORS
#: Any character step 4 may write out: one class, so a text with none is one fast search.
_CANDIDATE = re.compile(f"[{_spans_class(_CANDIDATES)}]")


@functools.cache
def _rules() -> tuple[re.Pattern[str], re.Pattern[str], Callable[[re.Match[str]], str]]:
    """The patterns for a text that holds a candidate, built on first need (they take a few
    milliseconds, which ``import runvil`` should not pay): the characters real text needs,
    where real text puts them; a run of candidates; and what writes a run out."""
    # Scripts that shape or join with ZWJ/ZWNJ (the module docstring lists them): their
    # letters and marks in the Basic Multilingual Plane, and the two supplementary blocks whole
    # (hundreds of supplementary runs would make the regex engine scan a range list per check;
    # two ranges keep every check constant-time).
    joining = _spans_class((
        *_letters_and_marks((
            (0x0600, 0x08FF), (0x0900, 0x0DFF), (0x0F00, 0x0FFF), (0x1000, 0x109F),
            (0x1780, 0x18AF), (0xA840, 0xA8FF), (0xA980, 0xAA7F), (0xFB50, 0xFDFF),
            (0xFE70, 0xFEFC),
        )),
        (0x10A00, 0x10A5F), (0x11000, 0x11FFF),
    ))
    # Emoji and the pictographs emoji sequences are made of (Extended_Pictographic, as ranges;
    # the skin-tone modifiers are inside U+1F000-1FAFF), and what may end one before a ZWJ.
    emoji = _spans_class((
        (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049),
        (0x2122, 0x2122), (0x2139, 0x2139), (0x2194, 0x21FF), (0x2300, 0x23FF),
        (0x24C2, 0x24C2), (0x25A0, 0x27BF), (0x2900, 0x297F), (0x2B00, 0x2BFF),
        (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299),
        (0x1F000, 0x1FAFF),
    ))
    emoji_end = emoji + _spans_class(((0xFE0F, 0xFE0F),))
    # What a U+FE00-FE0F selector never follows: a candidate, whitespace, a control character.
    not_a_base = _spans_class((*_CANDIDATES, (0x00, 0x20), (0x7F, 0xA0))) + r"\s"
    ideographs = _spans_class(
        ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
    )
    # The three subdivision flags Unicode recommends (RGI) as tag sequences: U+1F3F4, the tags
    # spelling gbeng / gbsct / gbwls, U+E007F.
    flags = "|".join(
        re.escape("".join(chr(0xE0000 + ord(c)) for c in name))
        for name in ("gbeng", "gbsct", "gbwls")
    )
    # Every alternative starts with one character of a single class (the regex engine searches
    # for that class directly) and looks at most one character back and one ahead, or, for a
    # flag, six tags ahead: linear in the text.
    kept = re.compile(
        "[\u200c\u200d\ufe00-\ufe0f\U000e0100-\U000e01ef\U0001f3f4]"
        "(?:"
        f"(?<=[{emoji_end}]\u200d)(?=[{emoji}])"  # ZWJ between two emoji
        f"|(?<=[{joining}][\u200c\u200d])(?=[{joining}])"  # ZWJ/ZWNJ in a joining script
        f"|(?<=[^{not_a_base}][\ufe00-\ufe0f])"  # the first selector after a character
        f"|(?<=[{ideographs}][\U000e0100-\U000e01ef])"  # an ideographic one after an ideograph
        f"|(?<=\U0001f3f4)(?:{flags})\U000e007f"  # a recommended flag, kept whole
        ")"
    )
    run = re.compile(f"[{_spans_class(_CANDIDATES)}]+")
    table = {code: _json_escape(code) for lo, hi in _CANDIDATES for code in range(lo, hi + 1)}

    def written_out(match: re.Match[str]) -> str:
        return match.group().translate(table)

    return kept, run, written_out


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
