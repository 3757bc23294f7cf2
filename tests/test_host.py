"""The Host's Packs and Plugins: availability, requirements notices, packs.offer, Tool objects.

Every Pack / Plugin / notice / Tool-object example of seeds 000 and 001 is one test here (the Lua
runs of the same prompts come with the prompt runtime).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

from runvil import (
    DEFAULT_PLUGINS,
    Host,
    OfferError,
    PackObject,
    RunError,
    RunErrorKind,
    ToolObject,
    requirements_notice,
)
from runvil._host.objects import thaw
from tests.test_host_fakes import (
    FETCH_SCHEMA,
    SEARCH_DESCRIPTION,
    Fakes,
    fakes,
)

__all__ = ["fakes"]

PROVIDER = object()
NO_PROVIDER_NOTICE = (
    "the environment cannot satisfy this prompt:\n"
    "- web is unavailable: web needs runvil/search-provider, and this host provides none"
)


def host(**kwargs: Any) -> Host:
    kwargs.setdefault("search_provider", PROVIDER)
    return Host(**kwargs)


# -- the web Pack and the promptforge/web Plugin ------------------------------------------------


def test_default_host_serves_both_forms(fakes: Fakes) -> None:
    h = host()
    assert DEFAULT_PLUGINS == ("runvil/web", "promptforge/web")
    assert list(h.packs) == ["web"]
    assert list(h.plugins) == ["promptforge/web"]
    assert list(h.tools) == ["web/fetch", "web/search"]
    assert list(h.plugin_tools) == ["promptforge/web/fetch", "promptforge/web/search"]
    assert len(fakes.builds) == 1  # the fetch client is built once, shared by both forms


def test_web_pack_object(fakes: Fakes) -> None:
    pack = host().packs["web"]
    assert isinstance(pack, PackObject)
    assert (pack.id, pack.name, pack.dialect, pack.reason, pack.available) == (
        "web", "runvil/web", "runvil", None, True
    )
    assert [tool.id for tool in pack.tools] == ["web/fetch", "web/search"]
    assert [tool.wire_name for tool in pack.tools] == ["web_fetch", "web_search"]
    assert all(tool.pack is pack for tool in pack.tools)


def test_promptforge_plugin_object(fakes: Fakes) -> None:
    plugin = host().plugins["promptforge/web"]
    assert (plugin.id, plugin.name, plugin.dialect, plugin.available) == (
        "promptforge/web", "promptforge/web", "promptforge", True
    )
    assert [tool.id for tool in plugin.tools] == ["promptforge/web/fetch", "promptforge/web/search"]
    # Both tool paths sit under the Plugin id: dropping the last segment gives it back.
    assert {tool.id.rsplit("/", 1)[0] for tool in plugin.tools} == {"promptforge/web"}


def test_bare_entry_and_qualified_name_are_the_same_pack(fakes: Fakes) -> None:
    h = host()
    assert h.pack("web") is h.pack("runvil/web") is h.packs["web"]
    assert h.pack("acme/web") is None
    assert h.pack("runvil/web/fetch") is None


def test_host_with_only_the_runvil_form(fakes: Fakes) -> None:
    h = host(plugins=("runvil/web",))
    assert list(h.tools) == ["web/fetch", "web/search"]
    assert dict(h.plugins) == {} and dict(h.plugin_tools) == {}


def test_host_without_the_web_plugin_builds_nothing(fakes: Fakes) -> None:
    h = host(plugins=())
    assert dict(h.packs) == {} and dict(h.tools) == {}
    assert fakes.builds == []


def test_unknown_plugin_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown Plugin 'acme/web'; this host knows runvil/web"):
        Host(plugins=("acme/web",), search_provider=PROVIDER)


def test_a_single_plugin_name_counts_as_one(fakes: Fakes) -> None:
    assert list(host(plugins="promptforge/web").plugins) == ["promptforge/web"]


def test_config_must_be_a_mapping(fakes: Fakes) -> None:
    with pytest.raises(TypeError, match="config maps a Plugin's key to its configuration, not "):
        host(config=[("web", None)])


def test_fetch_client_gets_the_network_and_the_default_policy(fakes: Fakes) -> None:
    net = object()
    host(network=net)
    assert fakes.builds == [(PROVIDER, net, None)]  # None: build_web_tools uses FetchPolicy()


def test_default_search_provider_comes_from_the_environment(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_env = object()
    seen: list[Any] = []

    def provider_from_env(network: Any) -> object:
        seen.append(network)
        return from_env

    monkeypatch.setattr("runvil.web._pack._provider_from_env", provider_from_env)
    net = object()
    h = Host(network=net)
    assert h.packs["web"].available
    assert fakes.builds[0][0] is from_env
    assert seen == [net]


def test_environment_provider_is_read_through_the_host_network(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("RUNVIL_SEARCH_PROVIDER", "BRAVE_API_KEY", "TAVILY_API_KEY", "SEARXNG_URL",
                 "RUNVIL_SEARCH_GATEWAY_URL", "RUNVIL_SEARCH_GATEWAY_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RUNVIL_SEARCH_PROVIDER", "nope")
    with pytest.raises(ValueError, match="RUNVIL_SEARCH_PROVIDER must be one of"):
        Host()
    monkeypatch.delenv("RUNVIL_SEARCH_PROVIDER")
    assert Host().packs["web"].available
    assert fakes.builds[0][0].name == "duckduckgo"


# -- setup problems -----------------------------------------------------------------------------


@pytest.mark.parametrize("config", [{}, {"web": None}, {"web": {}}, {"other": 1}, None])
def test_no_configuration_is_accepted(fakes: Fakes, config: dict[str, Any] | None) -> None:
    assert host(config=config).packs["web"].reason is None


@pytest.mark.parametrize("value", [{"max_chars": 10}, [], "", 0, False, {"policy": None}])
def test_any_configuration_makes_the_pack_unavailable(fakes: Fakes, value: Any) -> None:
    h = host(config={"web": value})
    assert h.packs["web"].reason == "web takes no configuration"
    assert h.plugins["promptforge/web"].reason == "promptforge/web takes no configuration"
    assert dict(h.tools) == {} and dict(h.plugin_tools) == {}
    assert h.packs["web"].tools == ()
    assert fakes.builds == []


def test_no_search_provider_makes_the_pack_unavailable(fakes: Fakes) -> None:
    h = Host(search_provider=None)
    assert h.packs["web"].reason == (
        "web needs runvil/search-provider, and this host provides none"
    )
    assert h.plugins["promptforge/web"].reason == (
        "promptforge/web needs promptforge/search-provider, and this host provides none"
    )
    assert not h.packs["web"].available
    assert h.tools.get("web/fetch") is None  # no run receives web/fetch or web/search
    assert fakes.builds == []


def test_configuration_problem_comes_before_the_missing_provider(fakes: Fakes) -> None:
    h = Host(search_provider=None, config={"web": {"x": 1}})
    assert h.packs["web"].reason == "web takes no configuration"
    assert h.plugins["promptforge/web"].reason == "promptforge/web takes no configuration"


# -- requirements notices (seed 001 "When the web Pack is missing or unavailable") -------------


def test_prepare_returns_the_declared_pack(fakes: Fakes) -> None:
    h = host()
    assert h.prepare(uses=["web"]) == (h.packs["web"],)
    assert h.prepare(uses=["runvil/web", "web"]) == (h.packs["web"],)
    assert h.prepare(plugins=["promptforge/web"]) == (h.plugins["promptforge/web"],)
    assert h.prepare() == ()


def test_missing_pack_notice(fakes: Fakes) -> None:
    with pytest.raises(RunError) as caught:
        host(plugins=()).prepare(uses=["web"])
    assert caught.value.kind is RunErrorKind.RequirementsUnmet
    assert str(caught.value) == (
        "the environment cannot satisfy this prompt:\n- missing required Pack: web"
    )


def test_unavailable_pack_notice(fakes: Fakes) -> None:
    with pytest.raises(RunError) as caught:
        Host(search_provider=None).prepare(uses=["web"])
    assert caught.value.kind is RunErrorKind.RequirementsUnmet
    assert caught.value.text == NO_PROVIDER_NOTICE


def test_unavailable_pack_notice_for_configuration(fakes: Fakes) -> None:
    with pytest.raises(RunError) as caught:
        host(config={"web": {"max_chars": 5}}).prepare(uses=["web"])
    assert caught.value.text == (
        "the environment cannot satisfy this prompt:\n"
        "- web is unavailable: web takes no configuration"
    )


def test_missing_plugin_notice(fakes: Fakes) -> None:
    with pytest.raises(RunError) as caught:
        host(plugins=("runvil/web",)).prepare(plugins=["promptforge/web"])
    assert caught.value.kind is RunErrorKind.RequirementsUnmet
    assert str(caught.value) == (
        "the environment cannot satisfy this prompt:\n- missing required Plugin: promptforge/web"
    )


def test_plugin_without_search_provider_notice(fakes: Fakes) -> None:
    with pytest.raises(RunError) as caught:
        Host(search_provider=None).prepare(plugins=["promptforge/web"])
    assert caught.value.kind is RunErrorKind.RequirementsUnmet
    assert str(caught.value) == (
        "the environment cannot satisfy this prompt:\n"
        "- promptforge/web needs promptforge/search-provider, and this host provides none"
    )


def test_notice_names_every_unmet_declaration_in_order(fakes: Fakes) -> None:
    with pytest.raises(RunError) as caught:
        Host(search_provider=None, plugins=("runvil/web",)).prepare(
            uses=["acme/web", "web", "web", "runvil/web", "tools"], plugins=["promptforge/web"]
        )
    assert str(caught.value) == (
        "the environment cannot satisfy this prompt:\n"
        "- missing required Pack: acme/web\n"
        "- web is unavailable: web needs runvil/search-provider, and this host provides none\n"
        "- web is unavailable: web needs runvil/search-provider, and this host provides none\n"
        "- missing required Pack: tools\n"
        "- missing required Plugin: promptforge/web"
    )


def test_prepare_refuses_non_string_entries(fakes: Fakes) -> None:
    with pytest.raises(TypeError, match="uses: entries are strings, not int"):
        host().prepare(uses=[1])  # type: ignore[list-item]


def test_single_string_entry_counts_as_one(fakes: Fakes) -> None:
    h = host()
    assert h.prepare(uses="web") == (h.packs["web"],)


def test_requirements_notice_builder() -> None:
    assert requirements_notice(["a", "b"]) == (
        "the environment cannot satisfy this prompt:\n- a\n- b"
    )


# -- packs.offer ----------------------------------------------------------------------------------


def test_offer_pack_returns_its_tools_in_order(fakes: Fakes) -> None:
    h = host()
    assert [tool.id for tool in h.offer_pack("web")] == ["web/fetch", "web/search"]
    assert h.offer_pack("runvil/web") == h.packs["web"].tools


def test_offering_an_unavailable_pack_fails(fakes: Fakes) -> None:
    with pytest.raises(OfferError) as caught:
        Host(search_provider=None).offer_pack("web")
    assert str(caught.value) == (
        "packs.offer: the web Pack is unavailable in this run: "
        "web needs runvil/search-provider, and this host provides none"
    )
    assert caught.value.message == str(caught.value)


def test_offering_a_pack_unavailable_for_configuration(fakes: Fakes) -> None:
    with pytest.raises(OfferError, match=r"^packs\.offer: the web Pack is unavailable in this "
                       r"run: web takes no configuration$"):
        host(config={"web": 1}).offer_pack("web")


def test_offering_an_unknown_pack_fails(fakes: Fakes) -> None:
    with pytest.raises(OfferError, match=r"^packs\.offer: unknown Pack acme$"):
        host().offer_pack("acme")
    with pytest.raises(OfferError, match=r"^packs\.offer: unknown Pack web$"):
        host(plugins=()).offer_pack("web")


# -- Tool objects (seed 001 "Tool objects for the web tools", seed 000 "Tool names ...") --------


def test_runvil_tool_objects(fakes: Fakes) -> None:
    h = host()
    fetch = h.tools.get("web/fetch")
    assert isinstance(fetch, ToolObject)
    # Seed 001: fetch.id .. ' | ' .. fetch.description
    assert f"{fetch.id} | {fetch.description}" == (
        "web/fetch | Fetch a web page and return its main content as markdown."
    )
    search = h.tools["web/search"]
    assert search.description == (
        "Search the web and return a list of results (title, url, description)."
    )
    assert (fetch.name, fetch.wire_name, fetch.untrusted, fetch.dialect) == (
        "fetch", "web_fetch", True, "runvil"
    )
    assert fetch.pack is h.packs["web"]
    assert thaw(fetch.parameters) == FETCH_SCHEMA
    assert fetch.schema_dict() == FETCH_SCHEMA
    assert fetch.tool_id == "web/fetch"
    assert h.tools.get("web/nope") is None


def test_promptforge_tool_object_for_an_alias(fakes: Fakes) -> None:
    # Seed 000 page-tool: tools: { page: promptforge/web/fetch }
    page = host().bind("page", "promptforge/web/fetch")
    assert page.name == "page"
    assert page.wire_name == "fetch"
    assert isinstance(page.parameters, Mapping)  # a table in Lua
    assert dict(page.parameters) == {}  # "does not carry the schema"
    assert page.untrusted is False
    assert page.description == "Fetch a web page and return its main content as markdown."
    assert page.id == "promptforge/web/fetch"
    assert page.tool_id == "web/fetch"
    assert page.schema_dict() == FETCH_SCHEMA  # the model still sees the full schema
    assert page.pack is not None and page.pack.id == "promptforge/web"


def test_promptforge_search_alias(fakes: Fakes) -> None:
    search = host().bind("search", "promptforge/web/search")
    assert (search.name, search.wire_name, search.description) == (
        "search", "search", SEARCH_DESCRIPTION
    )


def test_binding_an_unknown_path_fails(fakes: Fakes) -> None:
    with pytest.raises(LookupError, match=r"^unknown tool promptforge/web/crawl$"):
        host().bind("x", "promptforge/web/crawl")
    with pytest.raises(LookupError, match=r"^tool promptforge/web/fetch is unavailable: "
                       r"promptforge/web needs promptforge/search-provider"):
        Host(search_provider=None).bind("x", "promptforge/web/fetch")


def test_tool_objects_are_read_only(fakes: Fakes) -> None:
    fetch = host().tools["web/fetch"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fetch.description = "something else"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fetch.id = "web/other"  # type: ignore[misc]
    with pytest.raises(TypeError, match="read-only"):
        fetch.parameters["type"] = "array"  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        fetch.parameters["properties"]["url"]["type"] = "number"
    with pytest.raises(AttributeError):
        fetch.parameters["required"].append("raw")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fetch.pack.reason = "x"  # type: ignore[union-attr,misc]
    with pytest.raises(TypeError):
        host().tools["web/x"] = fetch  # type: ignore[index]


def test_tool_object_schema_is_a_copy_of_the_catalog(fakes: Fakes) -> None:
    h = host()
    copy = h.tools["web/fetch"].schema_dict()
    copy["properties"]["url"]["type"] = "number"
    assert h.tools["web/fetch"].schema_dict() == FETCH_SCHEMA
    assert json.loads(json.dumps(h.tools["web/fetch"].parameters)) == FETCH_SCHEMA


def test_tool_objects_never_loop_in_repr(fakes: Fakes) -> None:
    h = host()
    assert "web/fetch" in repr(h.packs["web"])
    assert "web_fetch" in repr(h.tools["web/fetch"])


def test_resolve_accepts_objects_ids_and_paths(fakes: Fakes) -> None:
    h = host()
    fetch = h.tools["web/fetch"]
    assert h.resolve(fetch) is fetch
    assert h.resolve("web/fetch") is fetch
    assert h.resolve("promptforge/web/search") is h.plugin_tools["promptforge/web/search"]
    with pytest.raises(LookupError, match=r"^unknown tool web_fetch$"):
        h.resolve("web_fetch")
