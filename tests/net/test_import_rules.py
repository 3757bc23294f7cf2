"""The egress layering holds: who may import ``runvil._net``, what it imports, and where aiohttp's
private API is touched. Checked on the source, so a new import that breaks a rule fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import runvil

SRC = Path(runvil.__file__).resolve().parent
#: aiohttp modules whose contents are not its documented client API.
AIOHTTP_PRIVATE = ("aiohttp.client_proto", "aiohttp.client_reqrep", "aiohttp.helpers",
                   "aiohttp.streams", "aiohttp.connector")


def module_name(path: Path) -> str:
    parts = ["runvil", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports (``from a import b`` counts as ``a`` and ``a.b``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(path): imports(path) for path in sorted(SRC.rglob("*.py"))}


def importers_of(prefix: str) -> set[str]:
    return {
        name
        for name, imported in MODULES.items()
        if any(i == prefix or i.startswith(prefix + ".") for i in imported)
    }


def test_the_modules_were_found() -> None:
    assert {"runvil._net.connector", "runvil.web._search.egress", "runvil.prompts._models"} <= set(
        MODULES
    )


def test_search_never_imports_fetch() -> None:
    fetch_users = importers_of("runvil.web._fetch")
    assert {m for m in fetch_users if m.startswith("runvil.web._search")} == set()


def test_only_the_web_tools_and_the_model_clients_import_the_egress() -> None:
    outside = {
        m
        for m in importers_of("runvil._net")
        if not m.startswith(("runvil._net", "runvil.web")) and m != "runvil.prompts._models"
    }
    assert outside == set()


def test_the_egress_imports_nothing_else_of_runvil() -> None:
    for name, imported in MODULES.items():
        if name.startswith("runvil._net"):
            rest = {i for i in imported if i.startswith("runvil.") or i == "runvil"}
            assert {i for i in rest if not i.startswith("runvil._net")} == set(), name


@pytest.mark.parametrize("private", AIOHTTP_PRIVATE)
def test_aiohttp_internals_are_touched_in_one_module(private: str) -> None:
    assert importers_of(private) <= {"runvil._net.connector"}


@pytest.mark.parametrize(
    "plumbing", ["runvil._net.connector", "runvil._net.body", "runvil._net.decoding.make_decoder"]
)
def test_only_the_egress_client_sends_and_reads(plumbing: str) -> None:
    """The fetch, robots.txt, the search providers and the model clients all go through
    ``runvil._net.client``; none of them opens a session, sends or reads a body itself."""
    assert {m for m in importers_of(plumbing) if not m.startswith("runvil._net")} == set()
