"""Keeping the credentials a request carried out of what its answer is quoted as.

A backend may echo what it was sent (a proxy's debug page, a validation error that repeats the
headers), and its error body is quoted back in a message a model reads. Two rules make that
safe whatever the backend does and wherever the model makes the cut fall (it steers the offset
with the length of its query):

1. **Redact before cutting.** Every copy of a secret is replaced in the full text first, and
   only then is the quote cut to its length, so a cut can never split a secret into a prefix
   that survives. A backend that shortened its own echo is caught the same way: any run of a
   secret's first :data:`LONG_PARTIAL` or more characters counts as a copy, wherever it is.
2. **A trailing partial secret is redacted too.** A quote that ends with the first
   :data:`MIN_PARTIAL` or more characters of a secret (the cut fell inside a copy that was not
   whole to begin with) has that tail replaced.

Each secret is looked for as written and in the forms an echo commonly takes: percent-encoded
(a URL), JSON-escaped and HTML-escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import TypeVar
from urllib.parse import quote

__all__ = ["LONG_PARTIAL", "MIN_PARTIAL", "REDACTED", "Secrets"]

_Text = TypeVar("_Text", str, bytes)

#: What a secret is replaced with.
REDACTED = "[redacted]"
#: The shortest run of a secret's first characters that is redacted wherever it appears.
LONG_PARTIAL = 8
#: The shortest trailing prefix of a secret that is redacted at the end of a quote. Shorter tails
#: are left alone: any text ends with the first character or two of some key, and three
#: characters give away little.
MIN_PARTIAL = 4


class Secrets:
    """The secrets one request carried; empty and ``None`` values are ignored."""

    __slots__ = ("_byte_forms", "_forms")

    def __init__(self, secrets: Iterable[str | None]) -> None:
        forms: dict[str, None] = {}
        for secret in secrets:
            if not secret:
                continue
            for form in (
                secret,
                quote(secret, safe=""),
                json.dumps(secret)[1:-1],
                html.escape(secret),
            ):
                forms.setdefault(form, None)
        # Longest first, so a form that contains another is replaced whole.
        self._forms = tuple(sorted(forms, key=len, reverse=True))
        self._byte_forms = tuple(form.encode("utf-8") for form in self._forms)

    def __bool__(self) -> bool:
        return bool(self._forms)

    def __repr__(self) -> str:
        return f"Secrets({len(self._forms)} forms)"

    def redact(self, text: str) -> str:
        """``text`` with every copy of every secret replaced (a copy: the whole secret, or a run
        of its first :data:`LONG_PARTIAL` or more characters). Whole copies go first, so one
        form's beginning never eats into a whole copy of another."""
        for form in self._forms:
            text = text.replace(form, REDACTED)
        for form in self._forms:
            text = _replace_runs(text, form, REDACTED)
        return text

    def redact_bytes(self, data: bytes) -> bytes:
        """:meth:`redact` on raw bytes, before they are cut and decoded."""
        replacement = REDACTED.encode("ascii")
        for form in self._byte_forms:
            data = data.replace(form, replacement)
        for form in self._byte_forms:
            data = _replace_runs(data, form, replacement)
        return data

    def redact_tail(self, text: str) -> str:
        """``text`` with a trailing partial secret (its first :data:`MIN_PARTIAL` or more
        characters) replaced; call after :meth:`redact` and after the cut."""
        for form in self._forms:
            for length in range(len(form) - 1, MIN_PARTIAL - 1, -1):
                if text.endswith(form[:length]):
                    return text[:-length] + REDACTED
        return text

    def cut(self, text: str, limit: int) -> str:
        """The first ``limit`` characters of ``text``, secrets redacted before and after the cut."""
        return self.redact_tail(self.redact(text)[:limit])


def _replace_runs(text: _Text, secret: _Text, replacement: _Text) -> _Text:
    """Each run of ``text`` that is ``secret`` or its first :data:`LONG_PARTIAL` or more
    characters, replaced; every run is taken as long as it matches."""
    head = secret[: min(LONG_PARTIAL, len(secret))]
    start = text.find(head)
    if start < 0:
        return text
    pieces: list[_Text] = []
    done = 0
    while start >= 0:
        end = start + len(head)
        while end - start < len(secret) and end < len(text) and text[end] == secret[end - start]:
            end += 1
        pieces += (text[done:start], replacement)
        done = end
        start = text.find(head, done)
    pieces.append(text[done:])
    return text[:0].join(pieces)
