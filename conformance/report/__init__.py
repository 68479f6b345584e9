"""Renderers: pure functions over a ``RunResult`` (results.json, JUnit XML, Markdown, HTML, terminal)."""

from __future__ import annotations

from pathlib import Path

from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.results import RunResult
from conformance.secrets import Scrubber
from conformance.untrusted import json_text, printable


def render_json(result: RunResult) -> str:
    return json_text(result.to_json(), indent=2) + "\n"


REPORT_FILES = ("results.json", "junit.xml", "report.md", "report.html", "crash.txt")
RUN_FOLDERS = ("wire", "reproducers")


def clear_reports(out: Path) -> None:
    """Remove an earlier run's reports from ``out`` (only the files and folders a run writes), so the folder holds
    this run's files only, even when this run ends early (exit 2 or 3) and writes none."""
    for name in REPORT_FILES:
        (out / name).unlink(missing_ok=True)
    for name in RUN_FOLDERS:
        folder = out / name
        if folder.is_dir():
            for path in folder.iterdir():
                if path.is_file():
                    path.unlink()


def write_all(result: RunResult, out: Path, scrub: Scrubber | None = None) -> list[Path]:
    """Write results.json, junit.xml, report.md and report.html into ``out``, every secret masked."""
    out.mkdir(parents=True, exist_ok=True)
    # server text is in every report: JSON carries it as escapes, the others show controls and invalid Unicode as
    # visible escapes (the renderers escape for their own syntax: HTML, Markdown's tables and code, XML)
    files = {"results.json": render_json(result), "junit.xml": printable(render_junit(result)),
             "report.md": printable(render_markdown(result)), "report.html": printable(render_html(result))}
    paths = []
    for name, text in files.items():
        path = out / name
        path.write_text(scrub.text(text) if scrub else text, encoding="utf-8")
        paths.append(path)
    return paths
