"""runvil: safe, exact web fetch and search tools for language models.

The public API is re-exported here (docs/api.md lists it); the modules behind it are private
details. Names are loaded on first use, so ``import runvil`` and ``from runvil import Host``
load neither the HTTP stack, the HTML parser, the Lua runtime nor the MCP SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runvil._lazy import lazy_exports

if TYPE_CHECKING:
    from runvil._envelope import envelope as envelope
    from runvil._envelope import is_nonce as is_nonce
    from runvil._envelope import new_nonce as new_nonce
    from runvil._envelope import unwrap as unwrap
    from runvil._errors import RunError as RunError
    from runvil._errors import RunErrorKind as RunErrorKind
    from runvil._errors import ToolError as ToolError
    from runvil._errors import ToolErrorKind as ToolErrorKind
    from runvil._host import DEFAULT_PLUGINS as DEFAULT_PLUGINS
    from runvil._host import Approval as Approval
    from runvil._host import ApprovalRequest as ApprovalRequest
    from runvil._host import Approver as Approver
    from runvil._host import CallResult as CallResult
    from runvil._host import Host as Host
    from runvil._host import OfferedTool as OfferedTool
    from runvil._host import OfferError as OfferError
    from runvil._host import PackObject as PackObject
    from runvil._host import Run as Run
    from runvil._host import Toolbox as Toolbox
    from runvil._host import ToolObject as ToolObject
    from runvil._host import ToolResult as ToolResult
    from runvil._host import refusal_message as refusal_message
    from runvil._host import requirements_notice as requirements_notice
    from runvil._host import tool_call_failure as tool_call_failure
    from runvil._pack import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from runvil._pack import Pack as Pack
    from runvil._pack import PackContext as PackContext
    from runvil._pack import Plugin as Plugin
    from runvil._pack import Requirement as Requirement
    from runvil._settings import Needed as Needed
    from runvil._settings import Setting as Setting
    from runvil._tools import RunScope as RunScope
    from runvil._tools import Tool as Tool
    from runvil._tools import ToolImplementation as ToolImplementation
    from runvil._tools import ToolOutcome as ToolOutcome
    from runvil._tools import TypedToolImplementation as TypedToolImplementation
    from runvil._tools import current_run as current_run

__version__ = "0.1.0"

#: Each public name and the private module it lives in.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("RunError", "RunErrorKind", "ToolError", "ToolErrorKind"), "runvil._errors"),
    **dict.fromkeys(
        (
            "RunScope", "Tool", "ToolImplementation", "ToolOutcome", "TypedToolImplementation",
            "current_run",
        ),
        "runvil._tools",
    ),
    **dict.fromkeys(("envelope", "is_nonce", "new_nonce", "unwrap"), "runvil._envelope"),
    **dict.fromkeys(
        ("ENTRY_POINT_GROUP", "Pack", "PackContext", "Plugin", "Requirement"), "runvil._pack"
    ),
    **dict.fromkeys(("Needed", "Setting"), "runvil._settings"),
    **dict.fromkeys(
        (
            "DEFAULT_PLUGINS", "Approval", "ApprovalRequest", "Approver", "CallResult", "Host",
            "OfferError",
            "OfferedTool", "PackObject", "Run", "ToolObject", "ToolResult", "Toolbox",
            "refusal_message", "requirements_notice", "tool_call_failure",
        ),
        "runvil._host",
    ),
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
