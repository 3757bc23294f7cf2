"""Prompt files: YAML frontmatter, a ``# Title``, then ``## Section`` blocks of prose and Lua.

A prompt file is meant to be read by people first, so the format is plain markdown with two
conventions: the frontmatter says what the prompt needs (its dialect, Packs or Plugins, tool
aliases, model roles), and every ``##`` section holds the prose a model will read followed by the
one ```` ```lua ```` block that runs it. Parsing is strict and every refusal names the line, because
a prompt that silently loses a section or a tool alias fails much later and much more confusingly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from runvil._errors import RunError, RunErrorKind

__all__ = ["Prompt", "Section", "load_prompt", "parse_prompt"]

Dialect = Literal["runvil", "promptforge"]

#: Frontmatter keys each dialect accepts (anything else is a typo worth reporting).
_COMMON_KEYS = ("name", "description", "models")
_DIALECT_KEYS: Mapping[str, tuple[str, ...]] = {
    "runvil": ("runvil", "uses"),
    "promptforge": ("promptforge", "plugins", "tools"),
}
#: Settings a ``models:`` role entry may carry.
_ROLE_KEYS = ("max_tokens", "temperature")

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)\s*$")
_ALIAS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LUA_KEYWORDS = frozenset(
    [
        "and",
        "break",
        "do",
        "else",
        "elseif",
        "end",
        "false",
        "for",
        "function",
        "goto",
        "if",
        "in",
        "local",
        "nil",
        "not",
        "or",
        "repeat",
        "return",
        "then",
        "true",
        "until",
        "while",
    ]
)


@dataclass(frozen=True)
class Section:
    """One ``##`` section: its heading, the prose before its code, and its Lua code."""

    title: str
    prose: str
    code: str
    #: 1-based line of the ``##`` heading and of the first line of code, in the file.
    line: int
    code_line: int


@dataclass(frozen=True)
class Prompt:
    """A parsed prompt file."""

    name: str
    description: str
    dialect: Dialect
    title: str
    sections: tuple[Section, ...]
    #: Runvil dialect: required Pack ids (``runvil/web`` is normalised to ``web``).
    uses: tuple[str, ...] = ()
    #: PromptForge dialect: required Plugin ids and ``alias -> tool path`` slots (file order).
    plugins: tuple[str, ...] = ()
    tools: Mapping[str, str] = field(default_factory=dict)
    #: Model roles the prompt names, each with its optional settings.
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Text between the title and the first section (kept, never sent to a model).
    intro: str = ""
    #: Where the prompt came from, used as the chunk name in Lua error messages.
    source: str = "prompt"


def _fail(source: str, line: int, message: str) -> RunError:
    return RunError(RunErrorKind.Parse, f"{source}:{line}: {message}")


def load_prompt(path: str | Path) -> Prompt:
    """Read and parse the prompt file at ``path``.

    Raises ``RunError(Parse, ...)`` when the file cannot be read or does not parse.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RunError(RunErrorKind.Parse, f"{p.name}: the file is not valid UTF-8") from None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise RunError(RunErrorKind.Parse, f"{p}: cannot read the prompt file: {reason}") from None
    return parse_prompt(text, source=p.name)


def parse_prompt(text: str, *, source: str = "prompt") -> Prompt:
    """Parse the text of a prompt file; ``source`` names it in error messages."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    if not lines or lines[0].rstrip() != "---":
        raise _fail(source, 1, "a prompt file starts with a '---' line opening its frontmatter")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise _fail(source, 1, "the frontmatter opened here is never closed with a '---' line")
    meta = _frontmatter(lines[1:end], source)
    title, intro, sections = _body(lines, end + 1, source)
    return Prompt(title=title, intro=intro, sections=tuple(sections), source=source, **meta)


# -- frontmatter --------------------------------------------------------------------------------


def _frontmatter(lines: list[str], source: str) -> dict[str, Any]:
    """Validate the frontmatter; frontmatter line ``i`` is file line ``i + 2``."""
    try:
        node = yaml.compose("\n".join(lines), Loader=yaml.SafeLoader)
        data = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        line = mark.line + 2 if mark is not None else 2
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise _fail(source, line, f"invalid frontmatter YAML: {problem}") from None
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise _fail(source, 2, "the frontmatter must be a YAML mapping of keys to values")
    key_lines: dict[str, int] = {}
    for key_node, _ in node.value:
        key_lines[str(key_node.value)] = key_node.start_mark.line + 2

    def at(key: str) -> int:
        return key_lines.get(key, 2)

    for key in data:
        if not isinstance(key, str):
            raise _fail(source, 2, f"frontmatter keys must be strings, not {key!r}")
    dialects = [d for d in ("runvil", "promptforge") if d in data]
    if not dialects:
        raise _fail(
            source, 2, "the frontmatter must name its dialect: 'runvil: 0' or 'promptforge: 0'"
        )
    if len(dialects) > 1:
        raise _fail(
            source,
            at("promptforge"),
            "the frontmatter names two dialects; keep one of 'runvil: 0' and 'promptforge: 0'",
        )
    dialect: Dialect = "runvil" if dialects[0] == "runvil" else "promptforge"
    version = data[dialect]
    if isinstance(version, bool) or version != 0:
        raise _fail(
            source,
            at(dialect),
            f"unsupported {dialect} version {version!r}; this host reads version 0",
        )
    allowed = _COMMON_KEYS + _DIALECT_KEYS[dialect]
    for key in data:
        if key not in allowed:
            other = "promptforge" if dialect == "runvil" else "runvil"
            hint = (
                f" ('{key}' belongs to the {other} dialect)"
                if key in _DIALECT_KEYS[other]
                else f" (allowed: {', '.join(allowed)})"
            )
            raise _fail(source, at(key), f"unknown frontmatter key '{key}'{hint}")

    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _fail(source, at("name"), "the frontmatter needs a 'name' string")
    description = data.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise _fail(source, at("description"), "'description' must be a string")

    result: dict[str, Any] = {"name": name, "description": description, "dialect": dialect}
    if dialect == "runvil":
        uses = _id_list(data.get("uses"), "uses", source, at("uses"))
        result["uses"] = tuple(u[len("runvil/") :] if u.startswith("runvil/") else u for u in uses)
    else:
        result["plugins"] = tuple(_id_list(data.get("plugins"), "plugins", source, at("plugins")))
        result["tools"] = _tool_slots(data.get("tools"), source, at("tools"))
    result["models"] = _roles(data.get("models"), source, at("models"))
    return result


def _id_list(value: Any, key: str, source: str, line: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise _fail(source, line, f"'{key}' must be a list of ids, as [web] or '- web' lines")
    ids: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip() or any(c.isspace() for c in item):
            raise _fail(source, line, f"'{key}' entries must be ids without spaces, not {item!r}")
        if item not in ids:
            ids.append(item)
    return ids


def _tool_slots(value: Any, source: str, line: int) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(
            source,
            line,
            "'tools' must map aliases to tool paths, as 'fetch: promptforge/web/fetch'",
        )
    slots: dict[str, str] = {}
    for alias, path in value.items():
        if not isinstance(alias, str) or not _ALIAS.match(alias) or alias in _LUA_KEYWORDS:
            raise _fail(source, line, f"tool alias {alias!r} must be a Lua identifier")
        if not isinstance(path, str) or "/" not in path or any(c.isspace() for c in path):
            raise _fail(source, line, f"tool slot '{alias}' must name a tool path, not {path!r}")
        slots[alias] = path
    return slots


def _roles(value: Any, source: str, line: int) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(source, line, "'models' must map role names to settings, as 'writer: {}'")
    roles: dict[str, dict[str, Any]] = {}
    for role, settings in value.items():
        if not isinstance(role, str) or not role.strip():
            raise _fail(source, line, f"model role {role!r} must be a name")
        if settings is None:
            settings = {}
        if not isinstance(settings, dict):
            raise _fail(
                source, line, f"model role '{role}' must map to settings, as '{role}: {{}}'"
            )
        for key, setting in settings.items():
            if key not in _ROLE_KEYS:
                raise _fail(
                    source,
                    line,
                    f"model role '{role}' has unknown setting '{key}' "
                    f"(allowed: {', '.join(_ROLE_KEYS)})",
                )
            if key == "max_tokens" and (
                isinstance(setting, bool) or not isinstance(setting, int) or setting < 1
            ):
                raise _fail(
                    source, line, f"model role '{role}': max_tokens must be a positive integer"
                )
            if key == "temperature" and (
                isinstance(setting, bool) or not isinstance(setting, int | float)
            ):
                raise _fail(source, line, f"model role '{role}': temperature must be a number")
        roles[role] = dict(settings)
    return roles


# -- body ---------------------------------------------------------------------------------------


def _body(lines: list[str], start: int, source: str) -> tuple[str, str, list[Section]]:
    title: str | None = None
    intro: list[str] = []
    sections: list[Section] = []
    current: dict[str, Any] | None = None
    i = start
    while i < len(lines):
        raw = lines[i]
        lineno = i + 1
        fence = _FENCE.match(raw.strip()) if raw.startswith(("```", "~~~")) else None
        if fence:
            marker, lang = fence.group(1), fence.group(2).lower()
            close = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], marker)), None)
            if close is None:
                raise _fail(source, lineno, "this code block is never closed")
            block = lines[i + 1 : close]
            if lang == "lua":
                if current is None:
                    raise _fail(source, lineno, "a ```lua block must sit inside a '## Section'")
                if current["code"] is not None:
                    raise _fail(
                        source,
                        lineno,
                        f"section '{current['title']}' has a second ```lua block; "
                        "each section holds one",
                    )
                current["code"] = "\n".join(block)
                current["code_line"] = i + 2
            else:
                target = current["prose"] if current is not None else intro
                if current is not None and current["code"] is not None:
                    raise _fail(
                        source,
                        lineno,
                        f"text after the ```lua block of section '{current['title']}'; "
                        "put a section's prose before its code",
                    )
                target.extend(lines[i : close + 1])
            i = close + 1
            continue
        if raw.startswith("## ") or raw.rstrip() == "##":
            heading = raw[2:].strip()
            if title is None:
                raise _fail(
                    source, lineno, "the prompt needs a '# Title' line before its first section"
                )
            if not heading:
                raise _fail(source, lineno, "a section heading needs a name after '##'")
            if current is not None:
                sections.append(_close(current, source))
            current = {"title": heading, "line": lineno, "prose": [], "code": None, "code_line": 0}
        elif raw.startswith("# ") or raw.rstrip() == "#":
            if title is not None:
                raise _fail(source, lineno, "the prompt has a second '# Title'; sections use '## '")
            title = raw[1:].strip()
            if not title:
                raise _fail(source, lineno, "the '# Title' line needs a title")
        elif current is not None:
            if current["code"] is not None:
                if raw.strip():
                    raise _fail(
                        source,
                        lineno,
                        f"text after the ```lua block of section '{current['title']}'; "
                        "put a section's prose before its code",
                    )
            else:
                current["prose"].append(raw)
        elif raw.strip():
            if title is None:
                raise _fail(
                    source, lineno, "the prompt needs a '# Title' line after its frontmatter"
                )
            intro.append(raw)
        i += 1
    if title is None:
        raise _fail(source, len(lines), "the prompt needs a '# Title' line after its frontmatter")
    if current is not None:
        sections.append(_close(current, source))
    if not sections:
        raise _fail(source, len(lines), "the prompt has no '## Section' with a ```lua block")
    return title, "\n".join(intro).strip(), sections


def _closes(line: str, marker: str) -> bool:
    """Whether ``line`` closes a fence opened with ``marker`` (same character, at least as long)."""
    text = line.strip()
    return len(text) >= len(marker) and set(text) == {marker[0]}


def _close(current: dict[str, Any], source: str) -> Section:
    if current["code"] is None:
        raise _fail(source, current["line"], f"section '{current['title']}' has no ```lua block")
    return Section(
        title=current["title"],
        prose="\n".join(current["prose"]).strip(),
        code=current["code"],
        line=current["line"],
        code_line=current["code_line"],
    )
