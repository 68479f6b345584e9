"""report.md: the summary, the capabilities, and every failure with its evidence."""

from __future__ import annotations

from conformance.report.common import (
    by_category,
    capability_state,
    not_judged,
    rule_counts,
    run_notes,
    triage,
    verdict,
)
from conformance.results import RunResult
from conformance.wire.untrusted import md_cell, md_code, md_fence


def render_markdown(result: RunResult) -> str:
    target = result.target
    summary = result.summary()
    lines = [
        f"# chat-conformance report: {verdict(result)}", "",
        f"- Target: {md_code(str(target['base_url']))}, model {md_code(str(target['model']))}, "
        f"profile {md_code(str(target['profile']))}"
        f"{', strict' if result.strict else ''}",
        f"- Tool: {result.tool['name']} {result.tool['version']}"
        f"{', rule set ' + result.tool['ruleset'] if 'ruleset' in result.tool else ''}; started {result.started_at}; "
        f"{result.duration_s:.1f} s",
        "- Rules: {judged} judged, {passed} passed, {failed} failed ({must} must, {should} should, {advisory} "
        "advisory), {skipped} skipped".format(**rule_counts(result)),
        f"- Checks (a rule in each scenario that shows it): {summary['passed']} passed, {summary['failed']} failed "
        f"({summary['failed_by_level']['must']} must, {summary['failed_by_level']['should']} should, "
        f"{summary['failed_by_level']['advisory']} advisory), {summary['skipped']} skipped, {summary['errors']} errors",
        *(f"- {note[0].upper()}{note[1:]}" for note in run_notes(result)),
    ]
    if target["capabilities"]:
        lines += ["", "## Capabilities", "", "| capability | supported | how | evidence |", "|---|---|---|---|"]
    for name, cap in target["capabilities"].items():
        lines.append(f"| {name} | {capability_state(cap)} | {md_cell(str(cap['source']))} | "
                     f"{md_cell(str(cap['evidence']))} |")
    if target.get("variants"):
        lines += ["", "Variants refused as documented (a 4xx naming the field; their rules are not judged):", ""]
        lines += [f"- {scenario}: {md_cell(str(why))}" for scenario, why in target["variants"].items()]
    if target.get("features"):
        lines += ["", "## Feature variants", "", "| variant | state | scenario | evidence |", "|---|---|---|---|"]
        lines += [f"| {md_cell(name)} | {f['state']} | {f['scenario']} | {md_cell(str(f['evidence']))} |"
                  for name, f in target["features"].items()]
    if result.clients:
        lines += ["", "## Works with (client libraries replaying this run's streams)", "",
                  "| client | version | verdict | detail |", "|---|---|---|---|"]
        lines += [f"| {md_cell(str(c.get('label')))} | {md_cell(str(c.get('version')))} | {c.get('verdict')} | "
                  f"{md_cell(str(c.get('reason') or ''))} |" for c in result.clients]
    generated = [s for s in result.scenarios if "examples" in s]  # a conformance fuzz run
    if generated:
        lines += ["", "## Generated requests", "", "| kind | examples | requests (with shrinking) | answers |",
                  "|---|---:|---:|---|"]
        for s in generated:
            answers = ", ".join(f"{k}: {v}" for k, v in sorted(s.get("statuses", {}).items()))
            lines.append(f"| {s['name']} | {s['examples']} | {s['requests']} | {answers} |")
        lines.append(f"\nHypothesis seed {generated[0].get('seed')}: `conformance fuzz --seed "
                     f"{generated[0].get('seed')}` repeats the run.")
    lines += ["", "## Rules by category", "", "| rules of | passed | must | should | advisory | skipped |",
              "|---|---:|---:|---:|---:|---:|"]
    for row in by_category(result):
        lines.append(f"| {row.category} | {row.passed} | {row.failed['must']} | {row.failed['should']} | "
                     f"{row.failed['advisory']} | {row.skipped} |")
    if result.stale_baseline:
        lines += ["", "## Stale baseline entries (now passing: remove them)", ""]
        lines += [f"- {s['rule']} [{s['scenario']}]" for s in result.stale_baseline]
    grouped = triage(result)
    lines += ["", f"## Failures ({len(grouped)} rules)", ""]
    for f in grouped:
        entry = f.first
        tag = " (known, in the baseline)" if f.known else "" if f.gating else " (does not fail the run)"
        lines += [f"### {f.rule} ({f.level}) {f.title}{tag}", "", f"- Source: {f.source}",
                  f"- Failed in {len(f.scenarios)} scenario(s): {f.where}", ""]
        lines += md_fence(entry.message)
        ev = entry.evidence or {}
        if ev.get("status") is not None or ev.get("headers"):
            heads = ", ".join(f"{k}: {v}" for k, v in (ev.get("headers") or {}).items())
            lines.append(f"Response: status {ev.get('status')}{'; ' + md_cell(heads) if heads else ''}")
            lines.append("")
        if ev.get("excerpt"):
            lines += [f"Evidence ({entry.scenario}): event {ev.get('event_index')}, byte {ev.get('byte_offset')}:",
                      "", *md_fence(str(ev["excerpt"]))]
        lines += [f"Reproduce ({entry.scenario}):", "", *md_fence(entry.reproducer, "sh"), ""]
    if not grouped:
        lines.append("None.")
    skipped = not_judged(result)
    if skipped:
        lines += ["", f"## Skipped and unsupported ({len(skipped)} rules)", "", "| rule | level | why |", "|---|---|---|"]
        lines += [f"| {n.rule} {n.title} | {n.level} | {md_cell(n.reason)} |" for n in skipped]
    return "\n".join(lines) + "\n"
