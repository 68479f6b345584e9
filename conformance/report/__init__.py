"""Renderers: pure functions over a ``RunResult`` (results.json, JUnit XML, Markdown, HTML, terminal)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.wire.untrusted import json_text, printable

if TYPE_CHECKING:
    from conformance.results import RunResult
    from conformance.secrets import Scrubber


def render_json(result: RunResult) -> str:
    return json_text(result.to_json(), indent=2) + "\n"


# format: (file name, module, renderer), imported when a run writes that format (a command that renders nothing,
# `inspect` printing to the terminal, starts without Jinja's templates or the report builders)
RENDERERS: dict[str, tuple[str, str, str]] = {
    "json": ("results.json", __name__, "render_json"), "junit": ("junit.xml", "conformance.report.junit", "render_junit"),
    "md": ("report.md", "conformance.report.markdown", "render_markdown"),
    "html": ("report.html", "conformance.report.html", "render_html")}


def renderer(fmt: str) -> Callable[[RunResult], str]:
    """The function that renders one report format."""
    _, module, name = RENDERERS[fmt]
    render: Callable[[RunResult], str] = getattr(importlib.import_module(module), name)
    return render


def write_all(result: RunResult, out: Path, scrub: Scrubber | None = None, formats: Iterable[str] | None = None,
              paths: Iterable[tuple[str, Path]] = ()) -> list[Path]:
    """Write the reports (``formats``: json, junit, md, html; all by default) into ``out``, or where ``paths``
    says for a format, every secret masked, badge.svg beside them; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    chosen = set(formats or RENDERERS)
    where = dict(paths)
    written = []
    for fmt, (name, _, _) in RENDERERS.items():
        if fmt not in chosen and fmt not in where:
            continue
        text = renderer(fmt)(result)
        # server text is in every report: JSON carries it as escapes, the others show controls and invalid Unicode
        # as visible escapes (the renderers escape for their own syntax: HTML, Markdown's tables and code, XML)
        text = text if fmt == "json" else printable(text)
        path = where.get(fmt, out / name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scrub.text(text) if scrub else text, encoding="utf-8")
        written.append(path)
    from conformance.report.badge import render_badge

    badge = out / "badge.svg"
    badge.write_text(scrub.text(render_badge(result)) if scrub else render_badge(result), encoding="utf-8")
    written.append(badge)
    return written
