"""Small questions about the compact tree that several extraction rules ask.

Why here: the picks, the corrections and the page-kind measures all ask whether one element
holds another, where a subtree ends, how much of an element is links; one copy of each keeps
their answers the same everywhere. Every walk is iterative (a page may nest 10,000 deep).
"""

from __future__ import annotations

from ._dom import Element

HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
HEADING_RANK = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


def contains(ancestor: Element, element: Element) -> bool:
    """Whether ``element`` is ``ancestor`` or lies inside it."""
    node: Element | None = element
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def last_descendant(element: Element) -> Element:
    """The last element of ``element``'s subtree in document order."""
    while True:
        for child in reversed(element.children):
            if type(child) is Element:
                element = child
                break
        else:
            return element


def link_density(element: Element) -> float:
    """The share of the element's text inside links."""
    if element.chars == 0:
        return 0.0
    return element.link_chars / element.chars


def first_class(element: Element) -> str:
    """The element's first class name (``""`` when it has none)."""
    classes = element.attrs.get("class")
    if not classes:
        return ""
    parts = classes.split(None, 1)
    return parts[0] if parts else ""


def holds_tag(element: Element, tag: str) -> bool:
    """Whether the element is, or holds, an element ``tag``."""
    stack = [element]
    while stack:
        node = stack.pop()
        if node.tag == tag:
            return True
        stack.extend(child for child in node.children if type(child) is Element)
    return False


def first_text(element: Element, most_nodes: int) -> str:
    """The first text of a subtree that is not only spaces (``""`` when it takes over
    ``most_nodes`` nodes to reach: a line of furniture is a few nodes, not thousands)."""
    children = element.children
    if children and type(children[0]) is str and not children[0].isspace():
        return children[0]  # the common case: a block that starts with its text
    stack: list[Element | str] = [element]
    nodes = most_nodes
    while stack and nodes:
        nodes -= 1
        node = stack.pop()
        if type(node) is str:
            if not node.isspace() and node:
                return node
        else:
            assert isinstance(node, Element)
            stack.extend(reversed(node.children))
    return ""


def small_text(element: Element, most_nodes: int) -> str:
    """The text of a small subtree, in document order (``""`` when it has over ``most_nodes``
    nodes)."""
    parts: list[str] = []
    stack: list[Element | str] = [element]
    nodes = most_nodes
    while stack:
        nodes -= 1
        if not nodes:
            return ""
        node = stack.pop()
        if type(node) is str:
            parts.append(node)
        else:
            assert isinstance(node, Element)
            stack.extend(reversed(node.children))
    return " ".join(parts)
