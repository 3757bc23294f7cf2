"""The tool scope of one model conversation: what the model is shown and may call.

A model can reach only a name it was offered. Everything it gets back (a result, a soft failure,
a hard failure's message) is third-party text in the run's envelope, so the conversation goes on
whatever happened (seeds 000/001: "the loop goes on"); only a name it was never offered gets the
Host's own plain notice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from runvil._errors import ToolErrorKind
from runvil._host.objects import ToolObject
from runvil._host.results import CallResult, model_text

__all__ = ["OfferedTool", "ToolResult", "Toolbox"]


@dataclass(frozen=True)
class ToolResult:
    """What goes back to a model (or an MCP client) for one tool call.

    ``text`` is the enveloped tool text, or the enveloped bare message of a hard failure
    (``is_error`` True), or, for a name the model was never offered, the host's own plain notice
    (``is_error`` True, not enveloped: it is not third-party text).
    """

    text: str
    is_error: bool = False
    error_kind: ToolErrorKind | None = None


@dataclass(frozen=True)
class OfferedTool:
    """One tool as a model round advertises it: the name the model calls (the wire name, or the
    alias in the promptforge form), the description (catalog or override) and the JSON schema."""

    name: str
    description: str
    tool: ToolObject

    @property
    def schema(self) -> dict[str, Any]:
        """A fresh copy of the JSON argument schema."""
        return self.tool.schema_dict()

    def spec(self) -> dict[str, Any]:
        """Neutral shape: ``{"name", "description", "parameters"}`` (a model client maps it to
        OpenAI's ``function`` or Anthropic's ``input_schema``)."""
        return {"name": self.name, "description": self.description, "parameters": self.schema}


class RunCalls(Protocol):
    """What a toolbox needs of its run (a :class:`~runvil.Run`): the nonce, name lookup and
    the typed call, so the calls are the run's (tracked, cancelled when it ends)."""

    @property
    def nonce(self) -> str: ...

    def resolve(self, tool: ToolObject | str) -> ToolObject: ...

    async def invoke(self, tool: ToolObject | str, args: Any) -> CallResult: ...


class Toolbox:
    """The tool scope of one model conversation: what the model is shown and may call.

    Tools are advertised in first-offer order; offering a tool again keeps its place (a new
    description override replaces the old one). A model can reach only a name it was offered.
    """

    def __init__(self, run: RunCalls) -> None:
        self._run = run
        self._offered: dict[str, OfferedTool] = {}

    def offer(
        self, tool: ToolObject | str, *, description: str | None = None
    ) -> OfferedTool:
        """Offer ``tool`` (a Tool object, a tool id or a tool path) to the model.

        The model calls it by its wire name (runvil form) or its alias (promptforge form: the
        Tool object's ``name``). ``description`` overrides what the model is shown, never the
        Tool object's ``description`` field. Raises ``LookupError`` for an unknown tool.
        """
        obj = self._run.resolve(tool)
        name = obj.name if obj.dialect == "promptforge" else obj.wire_name
        offered = OfferedTool(
            name=name,
            description=description if description is not None else obj.description,
            tool=obj,
        )
        self._offered[name] = offered
        return offered

    @property
    def offered(self) -> tuple[OfferedTool, ...]:
        """The offered tools in first-offer order."""
        return tuple(self._offered.values())

    def specs(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters"}]`` for every offered tool, in order."""
        return [offered.spec() for offered in self._offered.values()]

    def get(self, name: str) -> OfferedTool | None:
        """The offered tool a model calls ``name``, if any."""
        return self._offered.get(name)

    async def dispatch(self, name: str, args: Any) -> ToolResult:
        """Run a model's tool call and return what goes back to the model.

        Soft results and hard failures alike come back as the result text, enveloped, so the
        conversation goes on (seeds 000/001: "the loop goes on"). ``args`` may be the decoded
        JSON object or the raw JSON text the model sent.
        """
        offered = self._offered.get(name)
        if offered is None:
            names = ", ".join(self._offered) or "none"
            return ToolResult(
                f"unknown tool {name}; the tools offered are: {names}",
                is_error=True,
                error_kind=ToolErrorKind.InvalidArguments,
            )
        if isinstance(args, str | bytes):
            try:
                args = json.loads(args) if args.strip() else {}
            except (ValueError, RecursionError):
                # Not an argument object (nesting too deep for the parser included): the tool
                # names what is missing.
                args = {}
        result = await self._run.invoke(offered.tool, args)
        error = result.error
        return ToolResult(
            model_text(result, self._run.nonce),
            is_error=error is not None,
            error_kind=None if error is None else error.kind,
        )
