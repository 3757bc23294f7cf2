"""Page text reaches a result only through the escapers: the type and who may make it."""

from __future__ import annotations

import ast
from pathlib import Path

from runvil.web._fetch.pagetext import escape_lines, pdf_text

SRC = Path(__file__).resolve().parents[3] / "src" / "runvil"


def test_only_the_pagetext_module_makes_page_text() -> None:
    """Every other module gets a ``PageText`` from one of its functions, each of which says why
    its text is safe; none calls the type itself."""
    makers = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else (
                    node.func.id if isinstance(node.func, ast.Name) else None
                )
                if name == "PageText":
                    makers.append(path.relative_to(SRC).as_posix())
    assert makers and set(makers) == {"web/_fetch/pagetext.py"}


def test_the_result_types_require_page_text() -> None:
    import typing

    from runvil.web._fetch.continuation import Held
    from runvil.web._fetch.pagetext import PageText

    assert typing.get_type_hints(Held)["text"] is PageText


def test_lines_are_escaped_after_their_indentation() -> None:
    assert escape_lines("  ## heading\n\t> quote\n   - item\nplain") == (
        "  \\## heading\n\t\\> quote\n   \\- item\nplain"
    )


def test_a_setext_underline_and_a_rule_are_escaped() -> None:
    assert escape_lines("Title\n=====\n***") == "Title\n\\=====\n\\*\\*\\*"


def test_pdf_text_keeps_empty_pages_as_headings() -> None:
    assert pdf_text(["a *b*", "", "[x](y)"]) == (
        "## Page 1\n\na \\*b\\*\n\n## Page 2\n\n## Page 3\n\n\\[x](y)"
    )
