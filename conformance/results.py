"""The results model: one JSON document per run (results.json), and its JSON Schema."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

SCHEMA_VERSION = 1


@dataclass
class CheckEntry:
    """One rule evaluated against one scenario."""

    rule: str
    category: str
    level: str
    scenario: str
    outcome: str  # passed | failed | skipped | error
    message: str = ""
    evidence: dict[str, Any] | None = None
    reproducer: str = ""
    known: bool = False  # a failure listed in the baseline


@dataclass
class RunResult:
    """Everything a run found; every report renders this and nothing else."""

    tool: dict[str, str]
    target: dict[str, Any]
    started_at: str
    duration_s: float = 0.0
    checks: list[CheckEntry] = field(default_factory=list)
    scenarios: list[dict[str, Any]] = field(default_factory=list)
    stale_baseline: list[dict[str, str]] = field(default_factory=list)
    strict: bool = False

    def summary(self) -> dict[str, Any]:
        counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        by_level = {"must": 0, "should": 0, "advisory": 0}
        for entry in self.checks:
            key = "errors" if entry.outcome == "error" else entry.outcome
            counts[key] += 1
            if entry.outcome == "failed" and not entry.known:
                by_level[entry.level] += 1
        return {**counts, "failed_by_level": by_level, "known_failures": sum(c.known for c in self.checks),
                "stale_baseline": len(self.stale_baseline)}

    def failed_gate(self) -> bool:
        """Whether the run fails: must failures (and should, with strict), errors, stale baseline."""
        levels = ("must", "should") if self.strict else ("must",)
        return any(c.outcome == "failed" and not c.known and c.level in levels for c in self.checks) \
            or any(c.outcome == "error" for c in self.checks) or bool(self.stale_baseline)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION, "tool": self.tool, "target": self.target,
            "started_at": self.started_at, "duration_s": round(self.duration_s, 3), "strict": self.strict,
            "summary": self.summary(), "checks": [asdict(c) for c in self.checks],
            "scenarios": self.scenarios, "stale_baseline": self.stale_baseline,
        }


def schema() -> dict[str, Any]:
    """The JSON Schema of results.json, shipped in the package."""
    text = resources.files("conformance").joinpath("schemas/results.schema.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def from_json(doc: dict[str, Any]) -> RunResult:
    """A ``RunResult`` back from a results.json document."""
    result = RunResult(tool=doc["tool"], target=doc["target"], started_at=doc["started_at"],
                       duration_s=doc.get("duration_s", 0.0), strict=doc.get("strict", False),
                       scenarios=doc.get("scenarios", []), stale_baseline=doc.get("stale_baseline", []))
    result.checks = [CheckEntry(**c) for c in doc.get("checks", [])]
    return result
