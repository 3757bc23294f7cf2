"""How the Host finds the Plugins it was not handed, and words why a Pack is unavailable.

A Plugin is a callable registered in the entry-point group ``runvil.packs`` under the name a
Host is asked for (``runvil/web``), called with a :class:`~runvil.PackContext`, returning a
:class:`~runvil.Pack`. One callable may be registered under several names (the web Plugin is
registered as ``runvil/web`` and ``promptforge/web``); it is then called once and serves each
name in the form that name stands for. Third-party Packs are found the same way, as ``llm``
finds its plugins: installing a distribution that declares::

    [project.entry-points."runvil.packs"]
    "acme/notes" = "acme_notes:plugin"

makes ``Host(plugins=(..., "acme/notes"))`` and ``runvil run`` able to call it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runvil._pack import ENTRY_POINT_GROUP, Pack, Plugin

__all__ = ["installed_plugins", "load_plugin", "ordered_names", "pack_id", "setup_reason"]


#: Plugin names only runvil's own distribution may register. Another distribution's entry
#: point under them is ignored (and logged), so installing a package can add Packs but never
#: replace the web Pack that ``Host()`` serves.
RESERVED_PREFIXES = ("runvil/", "promptforge/")
OWNER = "runvil"

logger = logging.getLogger("runvil.host")


def installed_plugins() -> dict[str, Any]:
    """The entry points of :data:`ENTRY_POINT_GROUP` by name (not loaded yet). When two
    distributions register one name, the first found on ``sys.path`` wins, as imports do; a
    reserved name (``runvil/...``, ``promptforge/...``) counts only from runvil itself."""
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name.startswith(RESERVED_PREFIXES) and _distribution(entry) != OWNER:
            logger.warning(
                "ignoring the %s entry point %r of %s: the name is reserved for runvil",
                ENTRY_POINT_GROUP, entry.name, _distribution(entry),
            )
            continue
        found.setdefault(entry.name, entry)
    return found


def _distribution(entry: Any) -> str | None:
    """The normalised name of the distribution that registered ``entry``."""
    dist = getattr(entry, "dist", None)
    name = dist.metadata["Name"] if dist is not None else None
    return None if name is None else str(name).lower().replace("_", "-").replace(".", "-")


def load_plugin(name: str, installed: Mapping[str, Any]) -> Plugin:
    """The Plugin registered as ``name``; ``LookupError`` when none is, ``TypeError`` when the
    entry point names something that is not callable."""
    entry = installed.get(name)
    if entry is None:
        raise LookupError(name)
    plugin = entry.load()
    if not callable(plugin):
        raise TypeError(f"the {ENTRY_POINT_GROUP} entry point {name!r} is not callable")
    result: Plugin = plugin
    return result


def setup_reason(pack: Pack, label: str, vendor: str, config: Mapping[str, Any]) -> str | None:
    """Why ``pack`` is unavailable in the form labelled ``label`` (its Pack id or Plugin id)
    whose services are named under ``vendor``, or ``None``. Only the first problem is named:
    the configuration first, then each requirement in the Pack's order (seed 001)."""
    problem = pack.configure(config.get(pack.config_key))
    if problem is not None:
        return f"{label} {problem}"
    for requirement in pack.requirements:
        if not requirement.provided:
            return f"{label} needs {vendor}/{requirement.service}, and this host provides none"
    return None


def pack_id(pack: Pack) -> str:
    """The Pack id: the second segment of ``vendor/id``. ``ValueError`` for any other name."""
    vendor, sep, ident = pack.name.partition("/")
    if not sep or not vendor or not ident or "/" in ident:
        raise ValueError(f"a Pack's name is vendor/id, not {pack.name!r}")
    return ident


def ordered_names(names: Iterable[str], first: Sequence[str]) -> list[str]:
    """``names`` with those in ``first`` leading in that order, the rest sorted."""
    names = set(names)
    return [n for n in first if n in names] + sorted(names - set(first))
