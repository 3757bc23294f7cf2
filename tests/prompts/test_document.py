"""Prompt file parsing: both dialects, both list forms, and a Parse error naming the line for
every malformed file."""

from __future__ import annotations

from pathlib import Path

import pytest

from runvil import RunError, RunErrorKind
from runvil.prompts import load_prompt, parse_prompt

RUNVIL = """---
name: fetch-page
description: Fetches one web page with the web Pack.
runvil: 0
uses: [web]
---

# Fetch page

## Fetch

Some prose for the model.

```lua
return tools.call('web/fetch', { url = 'https://example.com/' })
```
"""

PROMPTFORGE = """---
name: research
description: Searches the web and summarizes the best sources
promptforge: 0
models:
  writer: {}
plugins:
  - promptforge/web
tools:
  search: promptforge/web/search
  fetch: promptforge/web/fetch
---

# Research

## Investigate

Search the web.

```lua
models.default('writer')
```

## Write

```lua
return 'done'
```
"""


def parse_error(text: str) -> str:
    with pytest.raises(RunError) as caught:
        parse_prompt(text, source="p.md")
    assert caught.value.kind is RunErrorKind.Parse
    return str(caught.value)


def test_runvil_prompt_parses() -> None:
    prompt = parse_prompt(RUNVIL, source="fetch-page.md")
    assert (prompt.name, prompt.dialect, prompt.uses, prompt.title) == (
        "fetch-page",
        "runvil",
        ("web",),
        "Fetch page",
    )
    assert prompt.description == "Fetches one web page with the web Pack."
    [section] = prompt.sections
    assert section.title == "Fetch"
    assert section.prose == "Some prose for the model."
    assert section.code == "return tools.call('web/fetch', { url = 'https://example.com/' })"
    assert (section.line, section.code_line) == (10, 15)
    assert prompt.source == "fetch-page.md"


def test_promptforge_prompt_parses_with_list_plugins_slots_and_roles() -> None:
    prompt = parse_prompt(PROMPTFORGE)
    assert prompt.dialect == "promptforge"
    assert prompt.plugins == ("promptforge/web",)
    assert dict(prompt.tools) == {
        "search": "promptforge/web/search",
        "fetch": "promptforge/web/fetch",
    }
    assert list(prompt.tools) == ["search", "fetch"]
    assert dict(prompt.models) == {"writer": {}}
    assert [s.title for s in prompt.sections] == ["Investigate", "Write"]
    assert prompt.sections[1].prose == ""


@pytest.mark.parametrize(
    "uses", ["uses: [web]", "uses:\n  - web", "uses: [runvil/web]", "uses: web"]
)
def test_uses_flow_list_and_qualified_forms_mean_the_same(uses: str) -> None:
    text = RUNVIL.replace("uses: [web]", uses)
    assert parse_prompt(text).uses == ("web",)


def test_load_prompt_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "fetch-page.md"
    path.write_text(RUNVIL, encoding="utf-8")
    assert load_prompt(path).source == "fetch-page.md"


def test_load_prompt_of_a_missing_file_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(RunError) as caught:
        load_prompt(tmp_path / "nope.md")
    assert caught.value.kind is RunErrorKind.Parse
    assert (
        str(caught.value)
        == f"{tmp_path / 'nope.md'}: cannot read the prompt file: No such file or directory"
    )


def test_non_fenced_code_in_prose_stays_prose_and_hides_headings() -> None:
    text = RUNVIL.replace(
        "Some prose for the model.", "Reply like this:\n\n```\n## not a heading\n```"
    )
    section = parse_prompt(text).sections[0]
    assert section.prose == "Reply like this:\n\n```\n## not a heading\n```"
    assert section.title == "Fetch"


def test_crlf_and_bom_are_accepted() -> None:
    text = "\ufeff" + RUNVIL.replace("\n", "\r\n")
    assert parse_prompt(text).sections[0].code.startswith("return tools.call")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Title\n", "p.md:1: a prompt file starts with a '---' line opening its frontmatter"),
        (
            "---\nname: x\nrunvil: 0\n",
            "p.md:1: the frontmatter opened here is never closed with a '---' line",
        ),
        (
            "---\n- a\n- b\n---\n",
            "p.md:2: the frontmatter must be a YAML mapping of keys to values",
        ),
        (
            "---\nname: x\n---\n# T\n",
            "p.md:2: the frontmatter must name its dialect: 'runvil: 0' or 'promptforge: 0'",
        ),
        (
            "---\nname: x\nrunvil: 0\npromptforge: 0\n---\n",
            "p.md:4: the frontmatter names two dialects; keep one of 'runvil: 0' and "
            "'promptforge: 0'",
        ),
        (
            "---\nname: x\nrunvil: 1\n---\n",
            "p.md:3: unsupported runvil version 1; this host reads version 0",
        ),
        (
            "---\nname: x\nrunvil: 0\nplugins: [promptforge/web]\n---\n",
            "p.md:4: unknown frontmatter key 'plugins' ('plugins' belongs to the promptforge "
            "dialect)",
        ),
        (
            "---\nname: x\nrunvil: 0\nuse: [web]\n---\n",
            "p.md:4: unknown frontmatter key 'use' (allowed: name, description, models, runvil, "
            "uses)",
        ),
        ("---\nrunvil: 0\n---\n", "p.md:2: the frontmatter needs a 'name' string"),
        (
            "---\nname: x\nrunvil: 0\nuses: {web: 1}\n---\n",
            "p.md:4: 'uses' must be a list of ids, as [web] or '- web' lines",
        ),
        (
            "---\nname: x\npromptforge: 0\ntools:\n  fetch: 3\n---\n",
            "p.md:4: tool slot 'fetch' must name a tool path, not 3",
        ),
        (
            "---\nname: x\npromptforge: 0\ntools:\n  end: promptforge/web/fetch\n---\n",
            "p.md:4: tool alias 'end' must be a Lua identifier",
        ),
        (
            "---\nname: x\nrunvil: 0\nmodels:\n  writer: {model: gpt}\n---\n",
            "p.md:4: model role 'writer' has unknown setting 'model' (allowed: max_tokens, "
            "temperature)",
        ),
        (
            "---\nname: x\nrunvil: 0\nuses: [web\n---\n",
            "p.md:4: invalid frontmatter YAML: expected ',' or ']', but got '<stream end>'",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n\n## Fetch\n",
            "p.md:6: the prompt needs a '# Title' line before its first section",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n# T\n",
            "p.md:6: the prompt has no '## Section' with a ```lua block",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n# T\n## A\ntext\n## B\n```lua\n```\n",
            "p.md:6: section 'A' has no ```lua block",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n# T\n## A\n```lua\nreturn 1\n",
            "p.md:7: this code block is never closed",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n# T\n## A\n```lua\n```\n```lua\n```\n",
            "p.md:9: section 'A' has a second ```lua block; each section holds one",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n# T\n## A\n```lua\n```\nafter\n",
            "p.md:9: text after the ```lua block of section 'A'; put a section's prose before "
            "its code",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n# T\n# U\n",
            "p.md:6: the prompt has a second '# Title'; sections use '## '",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\n# T\n```lua\n```\n",
            "p.md:6: a ```lua block must sit inside a '## Section'",
        ),
        (
            "---\nname: x\nrunvil: 0\n---\nprose\n",
            "p.md:5: the prompt needs a '# Title' line after its frontmatter",
        ),
    ],
)
def test_malformed_files_name_the_line(text: str, message: str) -> None:
    assert parse_error(text) == message


def test_invalid_utf8_file_is_a_parse_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes(b"---\nname: \xff\n")
    with pytest.raises(RunError) as caught:
        load_prompt(path)
    assert str(caught.value) == "bad.md: the file is not valid UTF-8"
