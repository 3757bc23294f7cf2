"""The shape of the package: which layer may import which, and what importing runvil costs.

docs/architecture.md draws the layers: faces -> host -> Packs (found by entry point) -> tools ->
_net -> core, with the prompt runtime beside the host and the adapters on top of it; search
never imports fetch, and the host imports nothing from web. The first tests read every module's
imports (function-level and type-only ones included) from its syntax tree and hold the source to
that drawing; the last ones check, in a fresh interpreter, that the light entry points stay
light.
"""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "runvil"
HEAVY = ("aiohttp", "selectolax", "lupa", "mcp")

#: Which layers each layer may import (its own included).
ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "net": {"core", "net"},
    "web": {"core", "net", "web"},
    "pack": {"core", "net", "web", "pack"},
    "host": {"core", "host"},
    "prompts": {"core", "net", "host", "prompts"},
    "adapters": {"core", "host", "adapters"},
    "faces": {"core", "net", "web", "pack", "host", "prompts", "adapters", "faces", "surface"},
    "surface": {"core", "net", "host", "web", "pack", "surface"},
}

def module_name(path: Path) -> str:
    parts = ["runvil", *path.relative_to(SRC).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in SRC.rglob("*.py")}


def layer(module: str) -> str:
    """The layer a runvil module belongs to."""
    if module in ("runvil", "runvil.web"):
        return "surface"
    if module in (
        "runvil._errors", "runvil._tools", "runvil._pack", "runvil._envelope", "runvil._closing",
        "runvil._lazy", "runvil._settings",
    ):
        return "core"
    for prefix, name in (
        ("runvil._net", "net"),
        ("runvil.web._pack", "pack"),
        ("runvil.web", "web"),
        ("runvil._host", "host"),
        ("runvil.prompts", "prompts"),
        ("runvil.adapters", "adapters"),
        ("runvil._faces", "faces"),
        ("runvil.__main__", "faces"),
    ):
        if module == prefix or module.startswith(prefix + "."):
            return name
    raise AssertionError(f"{module} belongs to no layer; add it to docs/architecture.md")


def imported(path: Path) -> Iterator[str]:
    """Every runvil module ``path`` imports, at any depth of its syntax tree."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "runvil":
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != "runvil":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield sub if sub in MODULES else base


def edges() -> Iterator[tuple[str, str]]:
    for module, path in sorted(MODULES.items()):
        for target in imported(path):
            yield module, target


def test_every_module_belongs_to_a_layer() -> None:
    assert {layer(module) for module in MODULES} <= set(ALLOWED)


def test_imports_point_down_the_layers() -> None:
    wrong = [
        f"{module} ({layer(module)}) imports {target} ({layer(target)})"
        for module, target in edges()
        if layer(target) not in ALLOWED[layer(module)]
    ]
    assert wrong == []


def test_the_host_imports_nothing_from_web() -> None:
    assert [
        (module, target) for module, target in edges()
        if module.startswith("runvil._host") and target.startswith("runvil.web")
    ] == []


def test_search_never_imports_fetch() -> None:
    assert [
        (module, target) for module, target in edges()
        if module.startswith("runvil.web._search") and target.startswith("runvil.web._fetch")
    ] == []


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (module -> the modules it imports), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        found: list[str] = err.args[1]
        return found
    return None


def test_the_host_package_has_no_import_circle() -> None:
    # Type-only and function-level imports count: a run holds the Host's invoker, not the
    # Host, and the toolbox needs only what a run offers it.
    inside = {m for m in MODULES if m.startswith("runvil._host.")}
    graph = {m: {t for t in imported(MODULES[m]) if t in inside and t != m} for m in inside}
    assert circle(graph) is None
    assert "runvil._host.host" not in graph["runvil._host.run"]
    assert "runvil._host.run" not in graph["runvil._host.toolbox"]


def test_the_circle_check_sees_a_circle() -> None:
    assert circle({"a": {"b"}, "b": {"a"}}) in (["a", "b", "a"], ["b", "a", "b"])
    assert circle({"a": {"b"}, "b": set()}) is None


def envelope_users() -> set[str]:
    """Every module that imports the envelope function (``runvil._envelope.envelope`` or its
    public name ``runvil.envelope``), or the envelope module whole."""
    users: set[str] = set()
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in ("runvil._envelope", "runvil"):
                if any(alias.name in ("envelope", "*") for alias in node.names):
                    users.add(module)
            elif isinstance(node, ast.Import) and any(
                alias.name == "runvil._envelope" for alias in node.names
            ):
                users.add(module)
    return users


def test_one_function_applies_the_envelope() -> None:
    # model_text (and the run's untrusted(), which Lua calls) in _host/results.py is the only
    # code that envelopes; the public surface re-exports the function for type checkers only.
    assert envelope_users() == {"runvil._host.results", "runvil"}
    results = ast.parse(MODULES["runvil._host.results"].read_text(encoding="utf-8"))
    callers = {
        function.name
        for function in ast.walk(results)
        if isinstance(function, ast.FunctionDef)
        for call in ast.walk(function)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
        and call.func.id == "envelope"
    }
    assert callers == {"untrusted"}


def test_no_face_builds_a_tool_itself() -> None:
    # The faces, the prompt runtime and the adapters call tools through a Host run (the web
    # Pack builds them): none names the tool classes or imports their modules.
    tools = ("runvil.web._fetch.tool", "runvil.web._search.tool")
    faces = [m for m in MODULES if layer(m) in ("faces", "prompts", "adapters")]
    assert [(m, t) for m in faces for t in imported(MODULES[m]) if t in tools] == []
    named = [
        m for m in faces
        for node in ast.walk(ast.parse(MODULES[m].read_text(encoding="utf-8")))
        if isinstance(node, ast.alias) and node.name in ("WebFetch", "WebSearch")
    ]
    assert named == []


def test_nothing_shipped_reads_a_test_seam() -> None:
    assert [path for path in SRC.rglob("*.py") if "RUNVIL_TEST" in path.read_text()] == []


def test_the_layer_rule_catches_an_upward_import() -> None:
    # The rule itself: the host reaching into web, or a tool into the host, is refused.
    assert "web" not in ALLOWED[layer("runvil._host.host")]
    assert "host" not in ALLOWED[layer("runvil.web._fetch.tool")]
    assert "faces" not in ALLOWED[layer("runvil.prompts._run")]


# -- what importing runvil costs -------------------------------------------------------------------


def heavy_after(code: str) -> list[str]:
    """The heavy packages in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = (
        f"import sys\n{code}\n"
        f"print('\\nheavy:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    last = done.stdout.rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith("heavy:"), done.stdout
    return [name for name in last[len("heavy:"):].split(",") if name]


@pytest.mark.parametrize(
    "code",
    [
        "import runvil",
        "from runvil import Host, ToolError",
        "from runvil import Host; Host(plugins=())",
        "import runvil.web, runvil.prompts, runvil.adapters",
        "from runvil.web import FetchPolicy, Network, web_pack, SearchSettings",
        "from runvil.prompts import Limits, parse_model_spec",
        "from runvil._faces.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    ],
)
def test_light_entry_points_load_no_heavy_package(code: str) -> None:
    assert heavy_after(code) == []


def test_the_probe_sees_a_heavy_import() -> None:
    assert heavy_after("from runvil.web import WebFetch") == ["aiohttp", "selectolax"]


def test_the_console_script_is_the_faces_entry_point() -> None:
    from importlib.metadata import entry_points

    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts["runvil"] == "runvil._faces.cli:main"


@pytest.mark.parametrize("surface", ["runvil", "runvil.web", "runvil.prompts"])
def test_every_public_name_resolves(surface: str) -> None:
    """docs/api.md's surface: each name its module lists loads from where the module says."""
    import importlib

    module = importlib.import_module(surface)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []
    assert set(module.__all__) <= set(dir(module))
    api = (SRC.parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
    assert [name for name in module.__all__ if f"`{name}`" not in api] == []


#: The modules a program imports (docs/api.md); every other module is private by name.
PUBLIC_MODULES = {
    "runvil", "runvil.__main__", "runvil.web", "runvil.prompts", "runvil.adapters",
    "runvil.adapters.anthropic", "runvil.adapters.langchain", "runvil.adapters.openai",
    "runvil.adapters.pydantic_ai",
}


def test_every_module_behind_the_surface_is_private_by_name() -> None:
    public = sorted(
        name
        for name in MODULES
        if name not in PUBLIC_MODULES
        and not any(part.startswith("_") for part in name.split(".")[1:])
    )
    assert public == []


def test_the_docs_import_only_the_public_surface() -> None:
    """README.md and docs/ show programs importing from the surface docs/api.md lists."""
    root = SRC.parent.parent
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    imported = set()
    for page in pages:
        for line in page.read_text(encoding="utf-8").splitlines():
            words = line.strip().split()
            if len(words) >= 2 and words[0] in ("from", "import") and words[1].startswith("runvil"):
                imported.add((page.name, words[1].rstrip(",")))
    assert imported, "the docs show no import at all: the scan is broken"
    assert sorted(item for item in imported if item[1] not in PUBLIC_MODULES) == []
