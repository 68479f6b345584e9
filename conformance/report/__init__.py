"""Renderers: pure functions over a ``RunResult`` (results.json, JUnit XML, Markdown, HTML, terminal)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from conformance.engine.run import REPORT_FILES as REPORT_FILES
from conformance.engine.run import RUN_FOLDERS as RUN_FOLDERS
from conformance.engine.run import clear_reports as clear_reports
from conformance.report.badge import render_badge
from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.results import RunResult
from conformance.secrets import Scrubber
from conformance.wire.untrusted import json_text, printable


def render_json(result: RunResult) -> str:
    return json_text(result.to_json(), indent=2) + "\n"


RENDERERS: dict[str, tuple[str, Callable[[RunResult], str]]] = {
    "json": ("results.json", render_json), "junit": ("junit.xml", render_junit), "md": ("report.md", render_markdown),
    "html": ("report.html", render_html)}


def write_all(result: RunResult, out: Path, scrub: Scrubber | None = None, formats: Iterable[str] | None = None,
              paths: Iterable[tuple[str, Path]] = ()) -> list[Path]:
    """Write the reports (``formats``: json, junit, md, html; all by default) into ``out``, or where ``paths``
    says for a format, every secret masked, badge.svg beside them; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    chosen = set(formats or RENDERERS)
    where = dict(paths)
    written = []
    for fmt, (name, render) in RENDERERS.items():
        if fmt not in chosen and fmt not in where:
            continue
        text = render(result)
        # server text is in every report: JSON carries it as escapes, the others show controls and invalid Unicode
        # as visible escapes (the renderers escape for their own syntax: HTML, Markdown's tables and code, XML)
        text = text if fmt == "json" else printable(text)
        path = where.get(fmt, out / name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scrub.text(text) if scrub else text, encoding="utf-8")
        written.append(path)
    badge = out / "badge.svg"
    badge.write_text(scrub.text(render_badge(result)) if scrub else render_badge(result), encoding="utf-8")
    written.append(badge)
    return written
