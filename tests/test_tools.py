"""Catalog entries, wire names and the read-only mappings Tool objects are made of."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from runvil._host.objects import FrozenDict, freeze, thaw
from runvil._tools import Tool, wire_name


@pytest.mark.parametrize(
    ("tool_id", "wire"),
    [
        ("web/fetch", "web_fetch"),
        ("web/search", "web_search"),
        ("a.b/c.d", "a_b_c_d"),
        ("promptforge/web/fetch", "promptforge_web_fetch"),
    ],
)
def test_wire_names(tool_id: str, wire: str) -> None:
    assert wire_name(tool_id) == wire


def test_catalog_tool() -> None:
    tool = Tool("web/fetch", "Fetch a web page and return its main content as markdown.")
    assert (tool.name, tool.wire_name, tool.untrusted, dict(tool.parameters)) == (
        "fetch", "web_fetch", True, {}
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.id = "web/other"  # type: ignore[misc]


def test_frozen_dict_refuses_every_change() -> None:
    frozen = freeze({"a": {"b": [1, {"c": 2}]}})
    assert isinstance(frozen, FrozenDict)
    for attempt in (
        lambda: frozen.__setitem__("a", 1),
        lambda: frozen.__delitem__("a"),
        lambda: frozen.update(a=1),
        lambda: frozen.pop("a"),
        lambda: frozen.popitem(),
        lambda: frozen.setdefault("x", 1),
        lambda: frozen.clear(),
        lambda: frozen["a"].__setitem__("b", 0),
    ):
        with pytest.raises(TypeError, match="this mapping is read-only"):
            attempt()
    with pytest.raises(TypeError, match="this mapping is read-only"):
        frozen |= {"x": 1}
    assert frozen == {"a": {"b": (1, {"c": 2})}}


def test_frozen_values_serialise_and_thaw() -> None:
    frozen = freeze({"a": {"b": [1, {"c": 2}]}, "d": ("e",)})
    assert json.dumps(frozen) == '{"a": {"b": [1, {"c": 2}]}, "d": ["e"]}'
    thawed = thaw(frozen)
    assert thawed == {"a": {"b": [1, {"c": 2}]}, "d": ["e"]}
    thawed["a"]["b"].append(3)  # a fresh mutable copy
    assert frozen["a"]["b"] == (1, {"c": 2})
    assert copy.deepcopy(frozen) is frozen
    assert copy.copy(frozen) is frozen
    assert hash(frozen) == hash(freeze({"a": {"b": [1, {"c": 2}]}, "d": ("e",)}))


def test_freeze_copies_its_input() -> None:
    source = {"a": [1]}
    frozen = freeze(source)
    source["a"].append(2)
    assert frozen == {"a": (1,)}
