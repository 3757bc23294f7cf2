"""Text bound for a person's terminal.

Fetched pages, search results and prompt output are third-party text. Piped, runvil writes them
exactly; on a terminal, raw control characters would let a page drive the terminal (retitle it,
clear it, write the clipboard with OSC 52, hide text), so they are made visible instead.
"""

from __future__ import annotations

import re

__all__ = ["terminal_safe"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab made visible: C0 controls as
    their Unicode control pictures (ESC shows as ``\u241b``), DEL as ``\u2421`` and C1 controls
    as ``\ufffd``."""

    def picture(match: re.Match[str]) -> str:
        code = ord(match.group(0))
        if code < 0x20:
            return chr(0x2400 + code)
        return "\u2421" if code == 0x7F else "\ufffd"

    return _CONTROL.sub(picture, text)
