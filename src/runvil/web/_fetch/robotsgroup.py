"""The one group of a robots.txt that applies, found in one linear pass, before Protego reads it.

Why: Protego reads every group of a file, and some shapes make that grow faster than the file.
A group opened by U user-agent lines and followed by R rules gives each of the U agents its own
copy of all R rules (U x R: 2,000 agents and 2,000 rules, 66 KiB, took 3.6 s; a 512 KiB file of
that shape, minutes and gigabytes), and each agent line already named is looked up in a list of
the group's agents (U x U). Only one group ever applies to a fetch (RFC 9309 2.2.1: the group
naming the product token, else ``*``), so this pass reads the file the way Protego does
(comments, the tolerated spellings of each directive, where a group ends) and keeps the
``allow`` and ``disallow`` lines of that group only, in order, for Protego to parse as the whole
file under ``user-agent: *``. What Protego then parses is at most the file's own rules, once.

The matching cost of a rule with ``*`` grows with the URL's length (each is matched by searching
the URL), so a group may hold at most :data:`MAX_WILDCARD_RULES` of them; a file over that is
not evaluated (the caller treats it as disallowing everything, as a file that cannot be read).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MAX_WILDCARD_RULES", "Group", "select_group"]

#: Rules with a ``*`` one group may hold: matching a URL against one costs up to the URL's
#: length (8,192 characters at most), so 1,024 of them cost at most about 20 ms per check.
MAX_WILDCARD_RULES = 1024

# Protego's directive names and the misspellings it tolerates (protego 0.7, _protego.py).
_DISALLOW = frozenset({"disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})
_ALLOW = frozenset({"allow"})
_USER_AGENT = frozenset({"user-agent", "useragent", "user agent"})
_SITE_WIDE = frozenset({"sitemap", "sitemaps", "site-map", "host"})
_KNOWN = (
    _DISALLOW | _ALLOW | _USER_AGENT | _SITE_WIDE
    | {"crawl-delay", "crawl delay", "request-rate", "request rate", "visit-time", "visit time"}
)


class Group(NamedTuple):
    """The rules of the group that applies, as a file Protego can read."""

    text: str
    """``user-agent: *`` and the group's rule lines (no rules: no lines)."""
    rules: int
    wildcards: int
    """Rules with a ``*``."""


def _directive(line: str) -> tuple[str, str] | None:
    """A stripped, comment-free, non-empty line as ``(field, value)``, or None: Protego's
    reading (``_extract_directive``): ``field: value``, or ``field value`` for a known field of
    one or two words."""
    field: str | None = None
    value = ""
    if ":" in line:
        field, raw_value = line.split(":", 1)
        field = field.strip().lower()
        value = raw_value.strip()
        if field in _KNOWN:
            return field, value
        if not raw_value or raw_value[0].isspace():
            return field, value
    words = line.split()
    for count in (1, 2):
        candidate = " ".join(words[:count]).lower()
        if candidate in _KNOWN:
            return candidate, " ".join(words[count:])
    if field is None:
        return None
    return field, value


def select_group(text: str, name: str) -> Group:
    """The rules robots.txt ``text`` gives the agent ``name`` (lower case: a product token that
    some group names exactly, or ``*``), merged over every group naming it."""
    lines = ["user-agent: *"]
    wildcards = 0
    in_group = False  # the group being read names ``name``
    previous: str | None = None
    for line in text.splitlines():
        comment = line.find("#")
        if comment != -1:
            line = line[:comment]
        line = line.strip()
        if not line:
            continue
        found = _directive(line)
        if found is None:
            continue
        field, value = found
        is_agent = field in _USER_AGENT
        if is_agent and previous is not None and previous not in _USER_AGENT:
            in_group = False  # an agent line after rules opens a new group
        if field not in _SITE_WIDE:
            previous = field
        if not value:
            continue
        if is_agent:
            agent = value.lower()
            if agent == name or (agent != "*" and "*" in agent and agent.replace("*", "") == name):
                in_group = True
        elif in_group and (field in _ALLOW or field in _DISALLOW):
            lines.append(("allow: " if field in _ALLOW else "disallow: ") + value)
            if "*" in value:
                wildcards += 1
    return Group("\n".join(lines) + "\n", len(lines) - 1, wildcards)
