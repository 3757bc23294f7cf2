"""The two error families of runvil.

A *tool error* fails one tool call: the caller (Lua, a model loop, an MCP client) decides what to
do next. A *run error* ends a whole prompt run. Both carry their exact, specified message text,
and ``str(err)`` is always that text, because messages are part of the contract.
"""

from __future__ import annotations

from enum import StrEnum


class ToolErrorKind(StrEnum):
    """What kind of hard failure a tool call met (the value is the member's name)."""

    InvalidArguments = "InvalidArguments"
    Transport = "Transport"
    Backend = "Backend"
    Other = "Other"


class KindedError(Exception):
    """An error with a :class:`ToolErrorKind` and an exact message: ``str(err)`` is the message,
    ``repr(err)`` reads ``ToolError(Transport, '...')``. The shape :class:`ToolError` and the
    search providers' ``ProviderError`` share.

    ``untrusted`` says the message can carry text runvil did not write: a host name a page
    redirected to (``host {host} has no allowed address``), a search backend's error body
    (``web_search: backend returned {code}: {body}``). It is a property of the message's
    template, not of one occurrence, so a caller can rely on it. Every face that hands such a
    message to a model wraps it in the untrusted envelope, exactly as it wraps tool results
    (docs/errors.md, "Messages that carry third-party text").
    """

    def __init__(self, kind: ToolErrorKind, message: str, *, untrusted: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.untrusted = untrusted

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind.value}, {self.message!r})"


class ToolError(KindedError):
    """A hard tool failure: the call fails with ``kind`` and the exact ``message``."""


class RunErrorKind(StrEnum):
    """Why a prompt run ended without a result (the value is the member's name)."""

    RequirementsUnmet = "RequirementsUnmet"
    Tool = "Tool"
    Lua = "Lua"
    Model = "Model"
    Limit = "Limit"
    Parse = "Parse"


class RunError(Exception):
    """A run that ended in failure: ``kind`` classifies it, ``text`` is what the user reads."""

    def __init__(self, kind: RunErrorKind, text: str) -> None:
        super().__init__(text)
        self.kind = kind
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"RunError({self.kind.value}, {self.text!r})"
