"""render_html under Hypothesis: arbitrary strings and broken HTML never raise or recurse."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from runvil.web._fetch.extract import render_html

LABELS = {"readability", "raw-html"}

TAGS = [
    "div", "p", "span", "a", "b", "i", "ul", "ol", "li", "table", "tr", "td", "th", "pre", "code",
    "blockquote", "h1", "h3", "img", "br", "hr", "nav", "footer", "script", "style", "form",
    "select", "svg", "math", "template", "iframe", "article", "main", "section", "dl", "dd",
    "caption", "thead", "x-custom",
]  # fmt: skip
ATTRIBUTES = [
    'href="javascript:x"', 'href="/rel"', "href", 'href="http://[::1"', 'src="/i.png"',
    'alt="alt text"', "hidden", 'style="display:none"', 'class="language-py"',
    'class="cookie-banner"', 'aria-hidden="true"', 'role="navigation"', 'start="-4"',
    'colspan="999999"', 'class="post"',
]  # fmt: skip

texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",))
    | st.sampled_from("<>&;#\x00 \n\t\"'`|[]()*"),
    max_size=60,
)


@st.composite
def html_soup(draw: st.DrawFn) -> str:
    """Tag soup: random open, close and text pieces, most never closed or closed out of order."""
    pieces: list[str] = []
    for _ in range(draw(st.integers(0, 80))):
        kind = draw(st.integers(0, 3))
        tag = draw(st.sampled_from(TAGS))
        if kind == 0:
            attributes = draw(st.lists(st.sampled_from(ATTRIBUTES), max_size=3))
            pieces.append(f"<{tag} {' '.join(attributes)}>")
        elif kind == 1:
            pieces.append(f"</{tag}>")
        else:
            pieces.append(draw(texts))
    return "".join(pieces)


def check(html: str, raw: bool) -> None:
    text, label = render_html(html, "https://example.com/a/b", raw)
    assert isinstance(text, str)
    assert label in LABELS
    assert text == text.strip()
    if raw:
        assert label == "raw-html"
    if label == "readability":
        assert len(text.encode("utf-8")) >= 100


@settings(max_examples=300, deadline=None)
@given(st.text(), st.booleans())
def test_arbitrary_strings_never_raise(html: str, raw: bool) -> None:
    check(html, raw)


@settings(max_examples=300, deadline=None)
@given(html_soup(), st.booleans())
def test_broken_html_never_raises(html: str, raw: bool) -> None:
    check(html, raw)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(TAGS), st.integers(2_000, 10_000), st.booleans())
def test_deep_nesting_of_any_tag_never_recurses(tag: str, depth: int, raw: bool) -> None:
    check(f"<{tag}>" * depth + "deep text" + f"</{tag}>" * (depth // 2), raw)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(ATTRIBUTES), st.integers(10_000, 500_000), st.booleans())
def test_huge_attributes_never_raise(attribute: str, size: int, raw: bool) -> None:
    name = attribute.split("=")[0]
    nuls = "\x00" * 100
    check(f'<p {name}="{"x" * size}">text</p><a {name}="{nuls}">y</a>', raw)
