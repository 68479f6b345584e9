"""Renderers: pure functions over a ``RunResult`` (results.json, JUnit XML, Markdown, HTML, terminal)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.results import RunResult
from conformance.secrets import Scrubber


def render_json(result: RunResult) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"


def write_all(result: RunResult, out: Path, scrub: Scrubber | None = None) -> list[Path]:
    """Write results.json, junit.xml, report.md and report.html into ``out``, every secret masked."""
    out.mkdir(parents=True, exist_ok=True)
    files = {"results.json": render_json(result), "junit.xml": render_junit(result),
             "report.md": render_markdown(result), "report.html": render_html(result)}
    paths = []
    for name, text in files.items():
        path = out / name
        path.write_text(scrub.text(text) if scrub else text, encoding="utf-8")
        paths.append(path)
    return paths
