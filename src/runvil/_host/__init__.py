"""The Host: approval, the model-facing toolbox, runs, and the Pack boundary.

Private by name; the public names are re-exported by :mod:`runvil` (docs/api.md). This package
imports nothing from :mod:`runvil.web`: it finds Packs it was not handed through the
``runvil.packs`` entry-point group (docs/architecture.md).
"""

from runvil._host.approval import Approval, ApprovalRequest, Approver, refusal_message
from runvil._host.host import (
    DEFAULT_PLUGINS,
    Host,
    OfferError,
    requirements_notice,
    tool_call_failure,
)
from runvil._host.objects import FrozenDict, PackObject, ToolObject, freeze, thaw
from runvil._host.results import CallResult, model_text
from runvil._host.run import Run
from runvil._host.toolbox import OfferedTool, Toolbox, ToolResult
from runvil._pack import ENTRY_POINT_GROUP, Pack, PackContext, Plugin, Requirement

__all__ = [
    "DEFAULT_PLUGINS",
    "ENTRY_POINT_GROUP",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "CallResult",
    "FrozenDict",
    "Host",
    "OfferError",
    "OfferedTool",
    "Pack",
    "PackContext",
    "PackObject",
    "Plugin",
    "Requirement",
    "Run",
    "ToolObject",
    "ToolResult",
    "Toolbox",
    "freeze",
    "model_text",
    "refusal_message",
    "requirements_notice",
    "thaw",
    "tool_call_failure",
]
