"""Pages for the browser tests: app shells that a small framework builds, and a static article."""

from __future__ import annotations

import json

TITLE = "Field notes from the river delta"
PARAGRAPHS = [
    "The survey boats left at dawn, when the water was still and the light came in low over "
    "the reeds, and by noon the team had mapped four new channels cut by the spring floods.",
    "Each channel was measured twice, once on the way out and once on the way back, so that "
    "the tide could be taken out of the depths and the maps would agree with last year's.",
]
STORY = {"title": TITLE, "paragraphs": PARAGRAPHS}

#: A React-like ``h``/``render`` in a dozen lines: what an app shell ships, in miniature.
FRAMEWORK = """
function h(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) node.setAttribute(key, value);
  for (const child of children.flat()) node.append(child);
  return node;
}
function render(tree, root) { root.replaceChildren(tree); }
function story(data) {
  return h('article', {}, h('h1', {}, data.title), data.paragraphs.map(p => h('p', {}, p)));
}
"""

#: The article the shells build, as the fetch renders it (its text part).
STORY_TEXT = f"# {TITLE}\n\n{PARAGRAPHS[0]}\n\n{PARAGRAPHS[1]}"


def inline_shell() -> str:
    """An app shell whose data is inline JSON."""
    return (
        "<!doctype html><html><head><title>Delta</title>"
        f"<script id='__DATA__' type='application/json'>{json.dumps(STORY)}</script>"
        "</head><body><div id='root'></div>"
        "<noscript>You need to enable JavaScript to run this app.</noscript>"
        f"<script>{FRAMEWORK}"
        "render(story(JSON.parse(document.getElementById('__DATA__').textContent)),"
        " document.getElementById('root'));</script></body></html>"
    )


FETCHING_SHELL = (
    "<!doctype html><html><head><title>Delta</title>"
    "<script src='/static/app.js' defer></script></head>"
    "<body><div id='app'></div></body></html>"
)
#: The shell's script: it fetches its data from the same site.
APP_JS = (
    FRAMEWORK
    + "fetch('/api/story.json').then(r => r.json())"
    " .then(data => render(story(data), document.getElementById('app')));"
)

#: A page the static path renders well, though it has scripts and a mount point.
STATIC_ARTICLE = (
    "<!doctype html><html><head><title>Delta</title><script>window.x = 1;</script></head>"
    f"<body><div id='root'><article><h1>{TITLE}</h1><p>{PARAGRAPHS[0]}</p>"
    f"<p>{PARAGRAPHS[1]}</p></article></div></body></html>"
)


def shell_with(script: str, body: str = "") -> str:
    """An app shell that runs ``script`` (and holds ``body``) and then builds the story."""
    return (
        "<!doctype html><html><head><title>Delta</title></head><body>"
        f"{body}<div id='root'></div><script>{FRAMEWORK}{script}\n"
        f"render(story({json.dumps(STORY)}), document.getElementById('root'));</script>"
        "</body></html>"
    )
