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
