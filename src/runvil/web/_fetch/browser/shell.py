"""The ``auto`` rule: does a page's static rendering look like an empty app shell?

A page is rendered in the browser under ``FetchPolicy(browser="auto")`` only when its static
rendering has almost no text (fewer than :data:`SHELL_TEXT` characters of words) *and* its
markup shows that JavaScript builds it: a ``<script>`` together with a mount point (an
element a framework renders into: ``id="root"``, ``id="app"``, ``id="__next"``, ``<app-root>``,
``data-reactroot``, ``ng-app`` ...), or a ``<noscript>`` that asks for JavaScript. A page the
static path renders well never starts a browser, whatever its scripts; a short page with no
sign of a framework is short, not unrendered. docs/fetch.md has the rule with its measurement.
"""

from __future__ import annotations

import re

__all__ = ["SHELL_TEXT", "looks_like_app_shell"]

#: Fewer characters of words than this in the static rendering is "almost no text".
SHELL_TEXT = 200
#: How much of the markup the signs are looked for in (a shell is small; its head may be big).
SCAN_BYTES = 2 * 1024 * 1024

_SCRIPT = re.compile(rb"<script\b", re.IGNORECASE)
_MOUNT = re.compile(
    rb"""<[a-z][a-z0-9-]*\s[^>]*?\bid\s*=\s*["']?(?:root|app|__next|__nuxt|___gatsby|svelte|"""
    rb"""app-root|react-root|main-app|application|q-app|spa-root|mount|container-root)["'\s>]"""
    rb"""|<app-root\b|\bdata-reactroot\b|\bng-app\b|\bng-version\b|\bdata-server-rendered\b""",
    re.IGNORECASE,
)
_NOSCRIPT_ASKS = re.compile(
    rb"<noscript\b[^>]*>(?:(?!</noscript).){0,600}?"
    rb"(?:enable|turn on|activate|requires?|need|allow|switch on|without)"
    rb"(?:(?!</noscript).){0,120}?javascript"
    rb"|<noscript\b[^>]*>(?:(?!</noscript).){0,600}?javascript\s+(?:is\s+)?"
    rb"(?:required|disabled|needed|must be enabled)",
    re.IGNORECASE | re.DOTALL,
)
_WORD = re.compile(r"\w+")


def looks_like_app_shell(markup: bytes, rendered: str) -> bool:
    """True when ``rendered`` (the static result's text, header excluded) has almost no words
    and ``markup`` shows a framework builds the page (see the module docstring)."""
    if _text_chars(rendered) >= SHELL_TEXT:
        return False
    head = markup[:SCAN_BYTES]
    if _NOSCRIPT_ASKS.search(head):
        return True
    return bool(_SCRIPT.search(head) and _MOUNT.search(head))


def _text_chars(text: str) -> int:
    """Characters of words: markdown marks, link targets and spacing not counted."""
    text = re.sub(r"\]\([^)]*\)", "]", text)
    count = 0
    for match in _WORD.finditer(text):
        count += len(match.group())
        if count >= SHELL_TEXT:
            break
    return count
