"""The read-only Tool and Pack objects a prompt, a model loop or an MCP client is handed.

A tool publishes a catalog entry (:class:`runvil._tools.Tool`); the Host wraps it into these
objects, adding what only the Host knows: which Pack or Plugin the tool belongs to, the form
(runvil or promptforge), aliases and wire names. They are frozen all the way down, because a
prompt that could edit a tool's schema or description could change what the model is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from runvil._tools import Tool

__all__ = ["Dialect", "FrozenDict", "PackObject", "ToolObject", "freeze", "thaw"]

Dialect = Literal["runvil", "promptforge"]


class FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses every change.

    Tool objects are read-only all the way down, yet their schemas must still serialise with
    ``json.dumps`` and convert to Lua tables like any dict, which ``MappingProxyType`` does not.
    """

    __slots__ = ()

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("this mapping is read-only")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


def freeze(value: Any) -> Any:
    """A deep read-only copy of a JSON-like value: dicts become :class:`FrozenDict`, lists and
    tuples become tuples (which still serialise as JSON arrays)."""
    if isinstance(value, Mapping):
        return FrozenDict({str(key): freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """A fresh, mutable deep copy of a frozen JSON-like value (dicts and lists)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value


@dataclass(frozen=True, eq=False)
class PackObject:
    """A Pack (runvil form) or Plugin (promptforge form) as a prompt sees it. Read-only.

    ``id`` is the Pack id (``web``) or, in the promptforge form, the Plugin id
    (``promptforge/web``); ``name`` is the fully qualified name (``runvil/web`` /
    ``promptforge/web``). ``tools`` holds the Tool objects in tool id order; it is empty when the
    Pack is unavailable, and then ``reason`` says why (``None`` when the Pack is usable).
    """

    id: str
    name: str
    dialect: Dialect
    tools: tuple[ToolObject, ...] = ()
    reason: str | None = None

    @property
    def available(self) -> bool:
        """Whether the Pack built: a run receives its tools only then."""
        return self.reason is None

    def __repr__(self) -> str:
        state = "available" if self.reason is None else f"unavailable: {self.reason}"
        return f"<PackObject {self.name} ({state}) tools={[t.id for t in self.tools]}>"


@dataclass(frozen=True, eq=False)
class ToolObject:
    """A tool as a prompt, a model loop or an MCP server is handed it. Read-only.

    Runvil form (``tools.get('web/fetch')``): ``id`` is the tool id, ``name`` the tool name
    (``fetch``), ``wire_name`` the name a model calls (``web_fetch``), ``parameters`` the argument
    schema, ``untrusted`` True (the trust level of everything the tool returns).

    PromptForge form (an alias bound under ``tools:``): ``id`` is the tool path
    (``promptforge/web/fetch``), ``name`` the alias, ``wire_name`` the tool's own name in its
    Plugin (``fetch``, whatever the alias: seed 000's ``page.wire_name == 'fetch'``),
    ``parameters`` an empty table (seed 000: the field "does not carry the schema") and
    ``untrusted`` False (trust travels with each result, not with the tool).

    In both forms ``description`` is the catalog description, never an override; ``schema`` is the
    full JSON argument schema a model is shown; ``pack`` is the Pack / Plugin object; ``catalog``
    the tool's own catalog entry (its ``id`` is the runvil tool id in both forms).
    """

    id: str
    name: str
    description: str
    wire_name: str
    parameters: Mapping[str, Any]
    untrusted: bool
    dialect: Dialect
    schema: Mapping[str, Any] = field(repr=False)
    catalog: Tool = field(repr=False)
    pack: PackObject | None = field(default=None, repr=False)

    @property
    def tool_id(self) -> str:
        """The runvil tool id behind this object (``web/fetch`` in both forms)."""
        return self.catalog.id

    def schema_dict(self) -> dict[str, Any]:
        """A fresh mutable copy of the argument schema, for a model API or an MCP listing."""
        result: dict[str, Any] = thaw(self.schema)
        return result


def tool_object(catalog: Tool, dialect: Dialect, pack: PackObject) -> ToolObject:
    """The Tool object for ``catalog`` in ``dialect``, belonging to ``pack`` (see
    :class:`ToolObject` for what each form's fields hold)."""
    schema = freeze(catalog.parameters)
    if dialect == "runvil":
        return ToolObject(
            id=catalog.id,
            name=catalog.name,
            description=catalog.description,
            wire_name=catalog.wire_name,
            parameters=schema,
            untrusted=catalog.untrusted,
            dialect="runvil",
            schema=schema,
            catalog=catalog,
            pack=pack,
        )
    return ToolObject(
        id=f"{pack.id}/{catalog.name}",
        name=catalog.name,
        description=catalog.description,
        wire_name=catalog.name,
        parameters=FrozenDict(),
        untrusted=False,
        dialect="promptforge",
        schema=schema,
        catalog=catalog,
        pack=pack,
    )
