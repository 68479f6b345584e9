"""Fixtures from a peer's run (issue 15): the first exchange of every scenario in reports/<server>/wire, exact
bytes and a sidecar, written to conformance/_fixtures/<server>/ so the offline tests hold that server's verdicts.

    python peers/record.py SERVER [--source TEXT]

The wire log is already scrubbed of secrets. A request string over 4,096 characters (the over-context prompt, the
oversized body) is elided in the sidecar to its length: no check reads those strings, and the offline verdicts are
compared with the live ones before anything is written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "conformance" / "_fixtures"
LONG = 4096


def _elide(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONG:
        return f"<{len(value)} characters, elided in the fixture>"
    if isinstance(value, list):
        return [_elide(v) for v in value]
    if isinstance(value, dict):
        return {k: _elide(v) for k, v in value.items()}
    return value


def source(title: str, version: str) -> str:
    """Where a peer's fixtures came from, as their sidecars say it."""
    return f"recorded from {title} {version} serving the bundled bigram model, by nox -s peers"


def record(report_dir: Path, out: Path, source: str) -> dict[str, list[str]]:
    """Write the fixtures; return each scenario's failing rules (as judged offline from the fixture)."""
    from dataclasses import replace

    from conformance.checks import evaluate
    from conformance.engine.record import SUFFIX, sidecar
    from conformance.engine.wirelog import load
    from conformance.exchange import analyze

    run, outcomes = load(report_dir)
    profile = str(run.settings.get("profile", "openai"))
    live = _live_failures(report_dir)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    found: dict[str, list[str]] = {}
    for outcome in outcomes:
        ex = outcome.exchanges[0]
        if isinstance(ex.request, dict):
            ex = replace(ex, request=_elide(ex.request))
        name = outcome.scenario.name
        meta = sidecar(ex, source, profile)
        analysis = analyze(ex, profile)
        failed = sorted(v.rule.id for v in evaluate(analysis) if v.outcome == "failed")
        missing = sorted(set(live.get(name, [])) - set(failed) - _judged_elsewhere(outcome, profile))
        if missing:  # a verdict of the live run that this exchange alone does not give: say so, never hide it
            meta["description"] += f"; the live run also failed {', '.join(missing)} on its other exchanges"
        (out / f"{name}{SUFFIX.get(analysis.format, '.body')}").write_bytes(ex.body)
        (out / f"{name}.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        found[name] = failed
    return found


def _judged_elsewhere(outcome: Any, profile: str) -> set[str]:
    from conformance.checks import evaluate
    from conformance.exchange import analyze

    return {v.rule.id for ex in outcome.exchanges[1:] for v in evaluate(analyze(ex, profile)) if v.outcome == "failed"}


def _live_failures(report_dir: Path) -> dict[str, list[str]]:
    doc = json.loads((report_dir / "results.json").read_text())
    out: dict[str, list[str]] = {}
    for check in doc.get("checks", []):
        if check.get("outcome") == "failed":
            out.setdefault(check["scenario"], []).append(check["rule"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python peers/record.py", description=__doc__)
    parser.add_argument("server", help="a folder under reports/ with a wire log")
    parser.add_argument("--source", default=None)
    args = parser.parse_args(argv)
    report = ROOT / "reports" / args.server
    runs = report / "RUNS.json"
    title = json.loads(runs.read_text()) if runs.exists() else {}
    found = record(report, FIXTURES / args.server,
                   args.source or source(title.get("title", args.server), title.get("version", "")).replace("  ", " "))
    failing = sorted({r for rules in found.values() for r in rules})
    print(f"{len(found)} fixtures in {FIXTURES / args.server}; failing rules: {', '.join(failing) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
