"""The live run against a real peer, mlx_lm.server serving the bundled model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from conformance.engine.client import Limits
from conformance.engine.run import execute
from conformance.engine.servers import ServerProcess
from conformance.report import write_all
from conformance.results import RunResult, schema
from conformance.secrets import Scrubber
from conformance.settings import build_settings

SCENARIOS = {"stream-plain", "stream-usage", "non-stream", "n-two", "tools-required", "tools-none",
             "error-malformed-json", "error-unknown-model", "models", "http10", "max-tokens", "disconnect"}


@pytest.fixture(scope="module")
def result(mlx_server: ServerProcess, model_dir: Path) -> RunResult:
    settings = build_settings(base_url=mlx_server.base_url, model=str(model_dir), api_key="sk-secret-123",
                              scenarios=sorted(SCENARIOS), timeout=30)
    return execute(replace(settings, limits=Limits(total=30, idle=15, first_byte=15)))


def failed(result: RunResult, rule: str) -> set[str]:
    return {c.scenario for c in result.checks if c.rule == rule and c.outcome == "failed"}


def test_results_validate_against_the_published_schema(result: RunResult) -> None:
    jsonschema.validate(result.to_json(), schema())


def test_known_mlx_lm_deviations_are_found(result: RunResult) -> None:
    assert "stream-plain" in failed(result, "CHK-009")  # role on every delta
    assert "n-two" in failed(result, "CHK-007")  # n ignored
    assert "error-malformed-json" in failed(result, "ERR-001")  # {"error": "<string>"}
    assert "models" in failed(result, "MOD-001")  # 200 with an empty body when no HF cache exists


def test_conformant_parts_pass(result: RunResult) -> None:
    passed = {(c.rule, c.scenario) for c in result.checks if c.outcome == "passed"}
    for rule, scenario in [("SSE-002", "stream-plain"), ("TRN-001", "stream-plain"), ("FIN-001", "stream-plain"),
                           ("FIN-007", "max-tokens"), ("USG-006", "stream-usage"), ("TOOL-003", "tools-required"),
                           ("TRN-008", "http10"), ("CHK-013", "stream-plain")]:
        assert (rule, scenario) in passed, (rule, scenario)


def test_capabilities_probed(result: RunResult) -> None:
    caps = result.target["capabilities"]
    assert caps["tools"]["supported"] and caps["usage"]["supported"]
    assert not caps["ollama"]["supported"] and not caps["cancel-endpoint"]["supported"]


def test_disconnect_frees_the_work(result: RunResult) -> None:
    entries = [c for c in result.checks if c.rule == "CAN-001" and c.scenario == "disconnect"]
    assert entries and entries[0].outcome == "passed"


def test_api_key_never_lands_in_reports(result: RunResult, tmp_path: Path) -> None:
    write_all(result, tmp_path, Scrubber(["sk-secret-123"]))
    for path in tmp_path.iterdir():
        assert "sk-secret-123" not in path.read_text(encoding="utf-8"), path.name
    assert any("Bearer <redacted>" in c.reproducer for c in result.checks)


def test_html_report_is_self_contained(result: RunResult, tmp_path: Path) -> None:
    write_all(result, tmp_path)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html and "src=" not in html and "stylesheet" not in html
    assert "CHK-009" in html and "curl -sN" in html
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert doc["summary"]["failed_by_level"]["must"] > 0
