"""The core has layers (issue 61): no module of `conformance` imports, directly or not, a module that imports it back
(imports only for type checking aside), and the import-linter contracts of pyproject.toml (the layers; protocols
independent of each other) are kept. `lint-imports` runs the same contracts in .ci/run."""

from __future__ import annotations

import subprocess
import sys

import pytest

grimp = pytest.importorskip("grimp", reason="the dev extra (import-linter) is not installed")


def circles() -> list[list[str]]:
    """The strongly connected components of the module import graph with more than one module (Tarjan)."""
    graph = grimp.build_graph("conformance", include_external_packages=False, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle() -> None:
    assert circles() == []


def test_the_import_contracts_are_kept() -> None:
    import shutil
    from pathlib import Path

    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert command is not None, "lint-imports (the dev extra's import-linter) is not installed"
    proc = subprocess.run([command, "--no-cache"], capture_output=True, text=True, check=False, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0 and "0 broken" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_the_independence_contract_names_every_protocol() -> None:
    from pathlib import Path

    import tomllib

    from conformance.protocols import REGISTRY

    config = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "independence")
    assert contract["modules"] == [f"conformance.protocols.{name}" for name in REGISTRY]


# where the Completions API, the fifth protocol, is named outside its package (issue 61's proof of the seam), and
# why: what a new protocol adds outside its package is a registry line, and a client row if a client is checked on it
COMPLETIONS_OUTSIDE = {
    "conformance/protocols/__init__.py": "the registry: REGISTRY",
    "conformance/clients/__init__.py": "the clients' registry: the openai SDK's completions row",
    "conformance/clients/adapters/openai_python.py": "that row's mode of the openai SDK's adapter",
}


def test_the_completions_api_is_named_outside_its_package_only_by_registries() -> None:
    """The seam, measured (issue 61): every file of the package `conformance` outside
    `conformance/protocols/completions/` that names the protocol (the word completions, not /v1/chat/completions
    or chat.completions) is a registry. Its rules, checks, scenarios, payloads, assembler and capabilities are in
    its package; the schema's category enum, the reference server's routes and the fixture builders find it there."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    named = re.compile(r"(?<![/._\w-])completions(?![._/\w-])")
    found = {}
    for path in sorted((root / "conformance").rglob("*")):
        if path.suffix not in (".py", ".mjs", ".json", ".toml") or "_fixtures" in path.parts or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(root).as_posix()
        if relative.startswith("conformance/protocols/completions/"):
            continue
        lines = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if named.search(line)]
        if lines:
            found[relative] = lines
    assert sorted(found) == sorted(COMPLETIONS_OUTSIDE), found
    assert len(found["conformance/protocols/__init__.py"]) == 1, found
