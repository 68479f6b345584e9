"""The renderers as snapshots (syrupy): a change to what a report says shows in review, line by line.

Each renders the published mlx_lm.server run (a failing run with every kind of entry) and the reference run
(a passing one); `pytest --snapshot-update` writes them again after a deliberate change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.report.terminal import failure_lines, summary_lines
from conformance.results import from_json

ROOT = Path(__file__).resolve().parents[1]
RENDERERS = {"markdown": render_markdown, "junit": render_junit, "html": render_html,
             "terminal": lambda r: "\n".join(failure_lines(r) + summary_lines(r)) + "\n"}


@pytest.mark.parametrize("server", ["mlx-lm-server", "reference"])
@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_renderer_snapshot(server: str, renderer: str, snapshot: SnapshotAssertion) -> None:
    result = from_json(json.loads((ROOT / "reports" / server / "results.json").read_text(encoding="utf-8")))
    assert RENDERERS[renderer](result) == snapshot
