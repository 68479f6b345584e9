"""Baselines: known failures (rule + scenario) that do not fail a run. Entries that now pass are
stale and fail the run, so a baseline can only shrink."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.errors import ConfigError
from conformance.results import RunResult


def load_baseline(path: Path) -> list[dict[str, str]]:
    """The known failures in a baseline file; ``ConfigError`` for an unreadable one."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the baseline {str(path)!r}: {exc}") from None
    known = doc.get("known_failures") if isinstance(doc, dict) else None
    if not isinstance(known, list) or not all(isinstance(k, dict) and {"rule", "scenario"} <= set(k) for k in known):
        raise ConfigError(f"the baseline {str(path)!r} has no known_failures list of {{rule, scenario}} entries")
    return [{"rule": str(k["rule"]), "scenario": str(k["scenario"])} for k in known]


def apply_baseline(result: RunResult, known: list[dict[str, str]]) -> None:
    """Mark known failures; record baseline entries that no longer fail as stale."""
    wanted = {(k["rule"], k["scenario"]) for k in known}
    failing = set()
    for entry in result.checks:
        if entry.outcome == "failed" and (entry.rule, entry.scenario) in wanted:
            entry.known = True
            failing.add((entry.rule, entry.scenario))
    passing = {(e.rule, e.scenario) for e in result.checks if e.outcome == "passed"}
    # stale: judged again and passed; a rule skipped or not run this time says nothing about the entry
    result.stale_baseline = [{"rule": r, "scenario": s} for r, s in sorted((wanted - failing) & passing)]


def make_baseline(doc: dict[str, Any]) -> dict[str, Any]:
    """A baseline listing every must/should failure of a results.json document."""
    known = sorted({(c["rule"], c["scenario"]) for c in doc.get("checks", [])
                    if c.get("outcome") == "failed" and c.get("level") in ("must", "should")})
    return {"tool": doc.get("tool"), "target": doc.get("target", {}).get("base_url"),
            "known_failures": [{"rule": r, "scenario": s} for r, s in known]}
