"""The Pack contract: what a Pack declares so that a Host can serve it without knowing it.

A **Pack** is a built object that declares everything the Host needs to serve its tools: its
fully qualified name (``runvil/web``), the PromptForge Plugin id of its second form if it has one
(``promptforge/web``), the key of its configuration, the Host-wide services it requires, the
tools it builds, and which argument of a call an approval question shows. The Host owns the rules
that are the same for every Pack (the reason texts, the requirements notice, ``packs.offer``, the
envelope); the Pack owns its facts. So a second Pack needs no change to the Host, and a Pack
needs nothing from the Host but this module.

A **Plugin** builds a Pack from what the Host has (:class:`PackContext`); Plugins are found
through the ``runvil.packs`` entry-point group (docs/host.md, "Writing a Pack").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from runvil._tools import ToolImplementation

__all__ = ["ENTRY_POINT_GROUP", "Pack", "PackContext", "Plugin", "Requirement"]

#: The entry-point group Plugins are registered in.
ENTRY_POINT_GROUP = "runvil.packs"


@dataclass(frozen=True)
class Requirement:
    """A Host-wide service a Pack needs (``search-provider``) and whether it was given one.

    ``service`` is the bare service name; each form names it under its own vendor
    (``runvil/search-provider``, ``promptforge/search-provider``) in the reason text.
    """

    service: str
    provided: bool


@runtime_checkable
class Pack(Protocol):
    """A built Pack, as the Host serves it.

    ``name`` is ``vendor/id`` (the Pack id is the second segment and tool ids are
    ``{id}/{tool name}``); ``plugin_id`` names the PromptForge Plugin form, or is ``None`` when
    the Pack has none; ``config_key`` is the key of ``Host(config=...)`` whose value the Host
    hands :meth:`configure`; ``requirements`` lists the services it needs, in the order its
    reasons name them.
    """

    @property
    def name(self) -> str: ...

    @property
    def plugin_id(self) -> str | None: ...

    @property
    def config_key(self) -> str: ...

    @property
    def requirements(self) -> Sequence[Requirement]: ...

    def configure(self, value: Any) -> str | None:
        """``None`` if the Pack accepts ``value`` (``None`` when the Host's configuration has no
        entry for it), else the problem as the rest of a sentence whose subject is the Pack:
        ``"takes no configuration"`` reads ``web takes no configuration``."""
        ...

    def build(self) -> Sequence[ToolImplementation]:
        """The tool instances. The Host calls this once, and only when the Pack is usable in a
        form it was asked for."""
        ...

    def approval_detail(self, tool_name: str, args: Mapping[str, Any]) -> str | None:
        """What an approval question about this call shows, or ``None`` for a call that needs
        no approval (a tool that reaches nothing, or a call its tool refuses before reaching
        out)."""
        ...

    async def aclose(self) -> None:
        """Close whatever the built tools hold open."""
        ...


@dataclass(frozen=True)
class PackContext:
    """What a Host hands a Plugin: the Host-wide services by name (a service the caller did not
    give is absent; one given as ``None`` is present and means "this host provides none"), the
    network seam its tools speak through (``None``: the real network), and the Pack's settings.

    ``settings`` maps a setting's key to its value: the settings the Pack declares
    (:class:`runvil.Setting`) that the operator set in ``runvil.toml``, a variable or a flag
    (a setting left at its default is absent: the Pack's own default applies), and whatever an
    embedding application handed the Host for this Pack (``Host(settings={NAME: {...}})``)."""

    services: Mapping[str, Any] = field(default_factory=dict)
    network: Any = None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def fetch_policy(self) -> Any:
        """The ``fetch_policy`` setting (``Host(fetch_policy=...)`` sets it for the web Pack),
        or ``None``; for Plugins written before settings."""
        return self.settings.get("fetch_policy")


#: A Plugin: builds its Pack from what the Host has.
Plugin = Callable[[PackContext], Pack]
