"""The web Pack (``runvil/web``) and its PromptForge form (the ``promptforge/web`` Plugin).

The Pack is a thin, fixed shell around two tool instances: one ``WebFetch`` built once per Host
with the default fetch policy, and one ``WebSearch`` over the Host's search provider. It adds no
wrapping of its own: a call reaches the tool named by the last segment of its id or path, with
the call's arguments passed through, and the tool's text and errors come back unchanged.

What lives here is what the seeds say about the Pack itself: its names, its tool order, which
setup problems make it unavailable (first problem only, configuration first), and which argument
of each tool is the "detail" an approval prompt shows (the URL, the query).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from runvil.tools import Tool

#: The Pack id, fixed by the seeds: no Host can give the web Pack another.
PACK_ID = "web"
#: The Pack's fully qualified name.
PACK_NAME = "runvil/web"
#: The PromptForge Plugin id; its tool paths are ``promptforge/web/{tool name}``.
PLUGIN_ID = "promptforge/web"
#: The key under which a Host's configuration would hold the Plugin's (empty) configuration.
CONFIG_KEY = "web"
#: Tool names in tool id order: the Pack object's tools list is fetch, then search.
TOOL_NAMES: tuple[str, str] = ("fetch", "search")

Form = Literal["runvil", "promptforge"]

#: The Host-wide search service each form names when it is missing.
SEARCH_SERVICE: dict[Form, str] = {
    "runvil": "runvil/search-provider",
    "promptforge": "promptforge/search-provider",
}
#: How each form names the Pack in its reasons.
REASON_LABEL: dict[Form, str] = {"runvil": PACK_ID, "promptforge": PLUGIN_ID}

#: The argument each network tool's approval prompt shows.
_APPROVAL_ARGUMENT = {"fetch": "url", "search": "query"}


class ToolImplementation(Protocol):
    """What the Pack needs from a tool: its catalog entry and an async call."""

    @property
    def tool(self) -> Tool: ...

    async def call(self, args: dict[str, Any]) -> str: ...


def setup_problem(config: Mapping[str, Any], provider: object | None, form: Form) -> str | None:
    """Why the Pack cannot be built in ``form``, or ``None`` if it can.

    Only the first problem is named, in the seeds' order: a bad configuration comes before a
    missing search provider. (The seeds' third row, a missing Tokio runtime service, has no
    counterpart here: a Python Host always runs its tools on the caller's event loop.)
    """
    label = REASON_LABEL[form]
    if CONFIG_KEY in config and not _is_empty_configuration(config[CONFIG_KEY]):
        return f"{label} takes no configuration"
    if provider is None:
        return f"{label} needs {SEARCH_SERVICE[form]}, and this host provides none"
    return None


def _is_empty_configuration(value: Any) -> bool:
    """Only null (``None``) and ``{}`` (an empty mapping) count as no configuration."""
    return value is None or (isinstance(value, Mapping) and len(value) == 0)


def approval_detail(tool_name: str, args: Any) -> str | None:
    """The URL or query an approval prompt shows, or ``None`` when the call carries none.

    A call without a string ``url`` / ``query`` is refused by the tool itself before any network
    access, so it needs no approval: the user is never asked about a call that cannot go out.
    """
    key = _APPROVAL_ARGUMENT.get(tool_name)
    if key is None or not isinstance(args, Mapping):
        return None
    value = args.get(key)
    return value if isinstance(value, str) else None


class WebTools:
    """The two tool instances behind both forms of the Pack, built once per Host."""

    def __init__(self, fetch: ToolImplementation, search: ToolImplementation) -> None:
        self.fetch = fetch
        self.search = search
        self.by_name: dict[str, ToolImplementation] = {"fetch": fetch, "search": search}

    async def aclose(self) -> None:
        """Close whatever the tools hold open (the fetch client's connection pool)."""
        for impl in (self.fetch, self.search):
            close = getattr(impl, "aclose", None)
            if close is not None:
                await close()


def build_web_tools(provider: Any, network: Any, policy: Any) -> WebTools:
    """Build the fetch client (once, with ``policy``, the default one unless an embedding
    application chose a stricter one) and the search tool over ``provider``."""
    # Imported here, not at the top: the Host imports this module whenever runvil is imported,
    # and the fetch tool's HTML stack is needed only by a Host that builds the Pack.
    from runvil.web.fetch.policy import FetchPolicy
    from runvil.web.fetch.tool import WebFetch
    from runvil.web.search.tool import WebSearch

    fetch = WebFetch(policy=policy if policy is not None else FetchPolicy(), network=network)
    search = WebSearch(provider)
    return WebTools(fetch, search)
