"""Continuation: a page's whole text, kept for the run and read in slices (``start_index``).

Without continuation a call renders only what it returns: the first ``max_chars`` characters,
and whether there are more. With it (``FetchPolicy(continuation=True)``), the page is rendered
whole, once, and the whole text is kept for the run in :data:`PAGES`, keyed by the final URL and
``raw``; a call with ``start_index`` reads the slice it asks for from the kept text, so reading
on reads the same text as the first call did, without fetching the page again. A URL not kept
(never fetched in this run, evicted, older than ten minutes) is fetched again, under every rule.

"Whole" stays within the limits a single fetch already has: the body is the byte-capped body,
and the text kept is at most :func:`hold_limit` characters (the byte cap's number, 8,388,608
under the default policy). A page whose text goes on past that, or a flat-text body cut at the
byte cap, or a PDF cut at its page limit, is kept *cut*: the slice that reaches the end of what
is kept still says ``truncated: true``, as a fetch without continuation would, and its
``next_start_index`` then reads nothing more (docs/fetch.md, "Reading more").

The page is rendered and sliced by the one pipeline every fetch uses (:mod:`.pagetext`); this
module keeps what it rendered.
"""

from __future__ import annotations

import sys

from runvil.web._fetch.pagetext import Held
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.runstore import RunStore

__all__ = ["PAGES", "Held", "held_size", "hold_limit"]

#: What every run together may keep of page texts, per process.
PAGE_BUDGET = 64 * 1024 * 1024
#: Pages kept at most, per process, however small.
PAGE_ENTRIES = 4096
#: Seconds a kept page is served after it was fetched.
PAGE_MAX_AGE = 600.0


#: Every run's kept pages, keyed by ``(final href, raw)``.
PAGES: RunStore[Held] = RunStore(
    budget=PAGE_BUDGET, max_entries=PAGE_ENTRIES, max_age=PAGE_MAX_AGE
)


def hold_limit(policy: FetchPolicy) -> int:
    """The most characters of one page a run keeps: the byte cap's number. A flat-text body
    never decodes to more characters than it has bytes; rendered HTML may, and is cut there."""
    return policy.max_bytes


def held_size(held: Held) -> int:
    """The bytes a kept page costs, for the store's budget (its strings, and a margin for the
    tuple and the store's own records)."""
    return sys.getsizeof(held.text) + sys.getsizeof(held.href) + 256
