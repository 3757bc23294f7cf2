"""A tool call's result, and the one place it becomes the text a model reads.

Every face calls tools through a Host run (:meth:`runvil.Run.invoke`) and gets a
:class:`CallResult`: the tool's bare text (its result, a soft failure's text, or a hard failure's
message), the hard failure itself, and the tool's typed outcome when it has one. What a model is
handed is decided here and nowhere else: :func:`model_text` wraps a result in the run's untrusted
envelope (or leaves it bare where the operator turned the envelope off), for ``Run.call`` (a
prompt's ``tools.call``), the model's tool scope (``models.loop``, the framework adapters) and
the MCP server alike, and :func:`untrusted` is the one call of the envelope in runvil (Lua's
``untrusted(s)`` uses it too).
"""

from __future__ import annotations

from dataclasses import dataclass

from runvil._envelope import envelope
from runvil._errors import ToolError
from runvil._tools import ToolOutcome

__all__ = ["CallResult", "model_text", "untrusted"]


@dataclass(frozen=True, slots=True)
class CallResult:
    """One tool call, as a face reads it.

    ``text`` is the tool's bare text: its result or a soft failure's text, or, when ``error``
    is set (a hard failure: an unknown tool, a refused approval, the tool's own ``ToolError``),
    that error's message. ``outcome`` is the tool's typed result when the tool returns one
    (:class:`~runvil._tools.TypedToolImplementation`: ``web/fetch`` gives its ``FetchOutcome``),
    and ``None`` otherwise and on a hard failure.
    """

    text: str
    error: ToolError | None = None
    outcome: ToolOutcome | None = None

    @classmethod
    def failed(cls, error: ToolError) -> CallResult:
        """A hard failure: its message is the text."""
        return cls(error.message, error)

    @property
    def ok(self) -> bool:
        """A success: neither a hard failure nor a soft one the tool's outcome reports (a tool
        without a typed outcome cannot tell a soft failure from a success)."""
        return self.error is None and (self.outcome is None or self.outcome.ok)

    @property
    def soft(self) -> bool:
        """A soft failure the tool's typed outcome reports: the text is the call's result."""
        return self.error is None and self.outcome is not None and not self.outcome.ok


def untrusted(text: str, nonce: str) -> str:
    """``text`` in the untrusted envelope of the run whose nonce is ``nonce``."""
    return envelope(text, nonce)


def model_text(
    result: CallResult, nonce: str, *, enveloped: bool = True, own_errors_bare: bool = False
) -> str:
    """The text a model reads for ``result``, in the run's envelope (``nonce``).

    A result (a success or a soft failure) is third-party text: enveloped, unless ``enveloped``
    is False (``Run.call(envelope=False)``, ``runvil mcp --no-envelope``). A hard failure's
    message is enveloped too, so inside a model's conversation everything a call gives back
    reads as data and the conversation goes on; with ``own_errors_bare`` (the MCP server, whose
    protocol marks a failure as such) a message in runvil's own words stays bare and only one
    that can carry third-party text (``ToolError.untrusted``) is enveloped.
    """
    if not enveloped:
        return result.text
    error = result.error
    if error is not None and own_errors_bare and not error.untrusted:
        return result.text
    return untrusted(result.text, nonce)
