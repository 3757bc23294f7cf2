"""Values a model chooses cannot make runvil hold memory past a documented bound.

A model picks the url, the search arguments and the host names a fetch resolves; every cache
that keeps something derived from them is bounded by entry size and by count
(docs/reliability.md, "Hostile MCP clients"). The MCP face's own bounds are tested with the
server (tests/test_mcp_limits.py).
"""

from __future__ import annotations

import functools

import yarl._url

from runvil._net.rules import PublicWeb
from runvil.web._fetch.arguments import MAX_URL_CHARS


def test_a_long_dns_answer_is_not_remembered() -> None:
    many = [f"93.184.{i // 250}.{i % 250 + 1}" for i in range(17)]
    few = many[:16]
    rule = PublicWeb()
    assert rule.allowed("many.example", many) == tuple(many)
    assert set() == rule._all_allowed
    assert rule.allowed("few.example", few) == tuple(few)
    assert {tuple(few)} == rule._all_allowed


def test_the_url_library_cache_of_request_urls_holds_at_most_128_capped_urls() -> None:
    """The fetch builds each hop's request URL with ``URL.build(encoded=True)``, which yarl
    remembers in an LRU of 128 entries. With the url capped at 8,192 characters, an entry is at
    most 12 times that (a four-byte character percent-encodes into 12 ASCII characters)."""
    cached = yarl._url.build_pre_encoded_url
    assert isinstance(cached, functools._lru_cache_wrapper)
    assert cached.cache_info().maxsize == 128
    assert MAX_URL_CHARS == 8192
