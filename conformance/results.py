"""The results model: one JSON document per run (results.json), and its JSON Schema."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

from conformance.model import Level, Outcome, gating_levels

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
    findings: list[dict[str, Any]] = field(default_factory=list)  # every finding, not only the first


_CHECK_FIELDS = tuple(f.name for f in fields(CheckEntry))  # results.json's entry: the fields, not a deep copy of them (a
# flood run has thousands of entries, and the document is serialised at once)


@dataclass(frozen=True)
class RuleVerdict:
    """One rule across every scenario of a run: what the plugin's test, the terminal and the exit code show."""

    rule: str
    category: str
    level: Level
    outcome: Outcome
    message: str
    scenarios: tuple[str, ...]  # where it failed (or errored); where it was judged when it passed
    gating: bool  # a failure (or error) that fails the run


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
    incomplete: dict[str, Any] | None = None  # the run timeout ended the run: {"reason", "not_run"[, "interrupted"]}
    tokens: dict[str, int] = field(default_factory=dict)  # completion tokens asked for and received
    clients: list[dict[str, Any]] = field(default_factory=list)  # run --clients: a verdict per client library

    def summary(self) -> dict[str, Any]:
        counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        by_level = {"must": 0, "should": 0, "advisory": 0}
        for entry in self.checks:
            key = "errors" if entry.outcome == "error" else entry.outcome
            counts[key] += 1
            if entry.outcome == "failed" and not entry.known:
                by_level[entry.level] += 1
        return {**counts, "failed_by_level": by_level, "known_failures": sum(c.known for c in self.checks),
                "stale_baseline": len(self.stale_baseline), "verdict": "fail" if self.failed_gate() else "pass",
                "complete": self.incomplete is None, "tokens": dict(self.tokens)}

    def failed_gate(self) -> bool:
        """Whether the run fails: must failures (and should, with strict), errors, stale baseline, or a run the
        run timeout ended before every scenario was judged."""
        return self.incomplete is not None or any(v.gating for v in self.rule_verdicts())

    def judged_nothing(self) -> str | None:
        """Why no exchange of the run could judge any chosen rule (a selection whose scenarios show none of its
        rules: every entry is the "no scenario" placeholder), or None. A rule skipped for a capability the server
        lacks was judged: unsupported is a verdict."""
        if any(c.scenario != "—" for c in self.checks):
            return None
        first = next(iter(self.checks), None)
        return f"{first.rule}: {first.message}" if first is not None else "no rule was chosen"

    def rule_verdicts(self) -> list[RuleVerdict]:
        """Each judged rule's verdict across the scenarios, in rulebook order (stale baseline entries fail)."""
        from conformance.rules import RULES

        entries: dict[str, list[CheckEntry]] = {}
        for entry in self.checks:
            entries.setdefault(entry.rule, []).append(entry)
        stale: dict[str, list[str]] = {}
        for item in self.stale_baseline:
            stale.setdefault(item["rule"], []).append(item["scenario"])
        gating = gating_levels(self.strict)
        verdicts = []
        for rule in RULES:
            if rule.id in entries or rule.id in stale:
                verdicts.append(_verdict(rule.id, rule.category, Level(rule.level), entries.get(rule.id, []),
                                         stale.get(rule.id, []), gating))
        return verdicts

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION, "tool": self.tool, "target": self.target,
            "started_at": self.started_at, "duration_s": round(self.duration_s, 3), "strict": self.strict,
            "summary": self.summary(), "checks": [{name: getattr(c, name) for name in _CHECK_FIELDS} for c in self.checks],
            "rules": [{"rule": v.rule, "level": v.level.value, "outcome": v.outcome.value, "gating": v.gating,
                       "scenarios": list(v.scenarios), "message": v.message} for v in self.rule_verdicts()],
            "scenarios": self.scenarios, "stale_baseline": self.stale_baseline, "incomplete": self.incomplete,
            **({"clients": self.clients} if self.clients else {}),
        }


def _verdict(rule: str, category: str, level: Level, entries: list[CheckEntry], stale: list[str],
             gating: tuple[Level, ...]) -> RuleVerdict:
    errors = [e for e in entries if e.outcome == Outcome.ERROR]
    failed = [e for e in entries if e.outcome == Outcome.FAILED and not e.known]
    judged = [e for e in entries if e.outcome in (Outcome.PASSED, Outcome.FAILED)]
    if errors:
        return RuleVerdict(rule, category, level, Outcome.ERROR, errors[0].message,
                           tuple(e.scenario for e in errors), True)
    if stale:
        message = (f"known failure in {', '.join(stale)} no longer fails: remove it from the baseline")
        return RuleVerdict(rule, category, level, Outcome.FAILED, message, tuple(stale), True)
    if failed:
        return RuleVerdict(rule, category, level, Outcome.FAILED, failed[0].message, tuple(e.scenario for e in failed),
                           level in gating)
    if judged:
        return RuleVerdict(rule, category, level, Outcome.PASSED, "", tuple(e.scenario for e in judged), False)
    reasons = sorted({e.message for e in entries if e.outcome == Outcome.SKIPPED and e.message})
    return RuleVerdict(rule, category, level, Outcome.SKIPPED, reasons[0] if reasons else "no scenario showed this rule",
                       (), False)


def from_json(doc: dict[str, Any]) -> RunResult:
    """A ``RunResult`` back from a results.json document (the action's summary reads it)."""
    result = RunResult(tool=doc["tool"], target=doc["target"], started_at=doc["started_at"],
                       duration_s=doc.get("duration_s", 0.0), strict=doc.get("strict", False),
                       scenarios=doc.get("scenarios", []), stale_baseline=doc.get("stale_baseline", []),
                       incomplete=doc.get("incomplete"), tokens=dict((doc.get("summary") or {}).get("tokens") or {}),
                       clients=[c for c in doc.get("clients") or [] if isinstance(c, dict)])
    known = CheckEntry.__dataclass_fields__
    result.checks = [CheckEntry(**{k: v for k, v in c.items() if k in known}) for c in doc.get("checks", [])]
    return result


def schema() -> dict[str, Any]:
    """The JSON Schema of results.json, shipped in the package, with the category enum filled in from the registry
    (``rules.CATEGORIES``: a protocol added to the registry needs no edit of the shipped file)."""
    from conformance.rules import CATEGORIES

    text = resources.files("conformance").joinpath("schemas/results.schema.json").read_text(encoding="utf-8")
    doc = dict(json.loads(text))
    doc["properties"]["checks"]["items"]["properties"]["category"]["enum"] = list(CATEGORIES)
    return doc
