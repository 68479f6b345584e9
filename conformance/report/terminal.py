"""Terminal output with rich."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from conformance.wire.untrusted import json_text, printable

if TYPE_CHECKING:
    from conformance.engine.inspect import Inspection
    from conformance.results import RunResult

LEVEL_STYLE = {"must": "bold red", "should": "yellow", "advisory": "cyan"}


def print_inspection(result: Inspection, console: Console | None = None) -> None:
    """Events, the assembled message and the findings of an offline inspection."""
    from conformance.engine.inspect import iter_events
    from conformance.exchange import assembled_json

    out = console or plain_console()
    a = result.analysis
    shown, count = [], 0
    for event in iter_events(a):  # the first 200 listed, the rest counted: a long capture's events are never all held
        if count < 200:
            shown.append(event)
        count += 1
    out.print(f"[bold]{a.format.upper()}[/bold] body, {len(a.exchange.body)} bytes, {count} events "
              f"(profile {printable(a.profile.name)})")
    # the event table as plain columns (rich's Table measures every cell of every row: 0.3 s for 200 rows)
    rows = [(str(e["index"]), str(e["offset"]), printable(str(e.get("type", "line")), False),
             printable(str(e.get("data", json_text(e.get("value"))))[:160], False)) for e in shown]
    if count > 200:
        rows.append(("…", "", "", f"{count - 200} more"))
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(("#", "offset", "type"))]
    header = ("#", "offset", "type")
    out.print(" ".join(h.ljust(widths[i]) for i, h in enumerate(header)) + " data", style="bold", markup=False,
              highlight=False)
    out.file.write("".join(" ".join(r[i].ljust(widths[i]) for i in range(3)) + " " + r[3] + "\n" for r in rows))
    out.print("[bold]Assembled[/bold]")
    # JSON, written as it is: rich's wrapping of a long answer's lines costs seconds per megabyte (a long capture's
    # assembled text, a Completions answer's logprobs), and JSON needs none
    out.file.write(printable(json_text(assembled_json(a), indent=2)) + "\n")
    out.file.flush()
    findings = result.findings
    if not findings:
        out.print("[bold green]No findings.[/bold green]")
        return
    out.print(f"[bold]Findings ({len(findings)})[/bold]")
    for f in findings:
        where = []
        if f.event_index is not None:
            where.append(f"event {f.event_index}")
        if f.byte_offset is not None:
            where.append(f"byte {f.byte_offset}")
        style = LEVEL_STYLE.get(f.level, "")
        out.print(f"[{style}]{f.level:8}[/{style}] {f.rule} ({f.category}) {', '.join(where)}")
        out.print(f"         {printable(f.message)}", markup=False, highlight=False)


def summary_lines(result: RunResult) -> list[str]:
    """The end-of-run summary: verdict, per-category counts, capabilities."""
    from conformance.report.common import by_category, capability_state, rule_counts, rules_failed_line, run_notes, verdict

    t = result.target
    ruleset = f"  rule set {result.tool['ruleset']}" if "ruleset" in result.tool else ""
    lines = [f"{verdict(result)}  {t['base_url']}  model {t['model']}  profile {t['profile']}"
             f"{'  strict' if result.strict else ''}{ruleset}  ({result.duration_s:.1f} s)"]
    lines.append(rules_failed_line(result))
    table = Table(box=None, pad_edge=False, show_edge=False, header_style=None)
    table.add_column("rules of", min_width=12)
    for name in ("passed", "must", "should", "advis.", "skip"):
        table.add_column(name, justify="right")
    for row in by_category(result):
        table.add_row(row.category, str(row.passed), str(row.failed["must"]), str(row.failed["should"]),
                      str(row.failed["advisory"]), str(row.skipped))
    counts = rule_counts(result)
    table.add_row("total", str(counts["passed"]), str(counts["must"]), str(counts["should"]), str(counts["advisory"]),
                  str(counts["skipped"]))
    lines += _text(table)
    caps = ", ".join(f"{n} {capability_state(c)}" for n, c in t["capabilities"].items())
    lines.append(f"capabilities: {caps}")
    if t.get("variants"):
        lines.append(f"variants refused as documented (their rules not judged): {', '.join(t['variants'])}")
    feats = t.get("features") or {}
    if feats:
        states = {state: [n for n, f in feats.items() if f["state"] == state]
                  for state in ("accepted", "answered, not shown", "unsupported", "failed")}
        line = f"feature variants: {sum(f['state'] == 'supported' for f in feats.values())} of {len(feats)} supported"
        for state, names in states.items():
            if names:
                line += f"; {state}: {', '.join(names)}"
        lines.append(line)
    if result.stale_baseline:
        lines.append(f"stale baseline entries (now passing): {len(result.stale_baseline)}")
    return lines + run_notes(result)


def _text(renderable: object) -> list[str]:
    """A rich renderable as plain lines (no style codes: the caller styles and escapes each line)."""
    import io

    out = Console(file=io.StringIO(), width=100, color_system=None, highlight=False)
    out.print(renderable)
    return [line.rstrip() for line in out.file.getvalue().splitlines()]  # type: ignore[attr-defined]


class LiveProgress:
    """Renders engine events as they come: each scenario as it finishes (status, time, a running count);
    with ``verbose`` each scenario as it starts and each finding. Every line is scrubbed of secrets."""

    def __init__(self, console: Console, verbose: bool = False, scrub: Callable[[str], str] = str) -> None:
        self.console = console
        self.verbose = verbose
        self.scrub = scrub
        self.total = 0
        self.bar: Any = None  # on a terminal: a progress bar under the lines (rich.progress), gone at the end
        self.task: Any = None

    def close(self) -> None:
        """Take the progress bar down (the run ended, or failed)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def line(self, text: str, style: str = "") -> None:
        """One line to the terminal: secrets masked, then every control and unencodable character escaped."""
        self.console.print(printable(self.scrub(text)), style=style or None, markup=False, highlight=False,
                           soft_wrap=True)

    def handle(self, event: object) -> None:
        from conformance.engine import events as ev

        if isinstance(event, ev.ServerStarting):
            self.line("starting the bundled reference server …")
        elif isinstance(event, ev.ServerWaiting):
            self.line(f"waiting for {event.base_url} to answer (up to {event.seconds:g} s) …")
        elif isinstance(event, ev.RunStarted):
            self.total = len(event.scenarios)
            origin = " (bundled reference server)" if event.reference else ""
            bound = f" (ends within {event.bound_s:.0f} s)" if event.bound_s else ""
            self.line(f"chat-conformance: {event.base_url}{origin}, model {event.model}, profile {event.profile}, "
                      f"{self.total} scenarios{bound}", "bold")
            if getattr(self.console, "is_terminal", False) and self.bar is None and not _no_color():
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

                self.bar = Progress(TextColumn("scenarios"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                    console=self.console, transient=True)
                self.task = self.bar.add_task("scenarios", total=self.total)
                self.bar.start()
        elif isinstance(event, ev.RoutesProbed) and event.unserved:
            said = "; ".join(f"{name} ({why})" for name, why in event.unserved)
            self.line(f"  routes served: {', '.join(event.served) or 'none'}; not served: {said}: "
                      f"{event.unsent} scenario(s) not sent", "dim")
        elif isinstance(event, ev.ScenarioStarted) and self.verbose:
            self.line(f"  …       {event.category:12} {event.name} started", "dim")
        elif isinstance(event, ev.ScenarioFinished):
            status = "—" if event.status is None else str(event.status)
            aborted = f"  ({event.aborted})" if event.aborted else ""
            width = len(str(max(self.total, event.total)))  # the run's first count: the columns stay aligned
            if self.bar is not None and self.task is not None:
                self.bar.update(self.task, completed=event.done, total=event.total)
            self.line(f"  [{event.done:>{width}}/{event.total}] {event.category:12} {event.name:26} {status:>3} "
                      f"{event.elapsed_s:7.2f} s{aborted}", "yellow" if event.aborted or event.status is None else "")
        elif isinstance(event, ev.RunFinished):
            self.close()
        elif isinstance(event, ev.FindingReported) and self.verbose:
            e = event.entry
            first = e.message.splitlines()[0] if e.message else ""
            self.line(f"    {e.outcome:6} {e.rule} [{e.level}] {e.scenario}: {first}", LEVEL_STYLE.get(e.level, ""))


def failure_lines(result: RunResult, limit: int = 3) -> list[str]:
    """The failing rules, one entry each: level, title, where (and how many more), the first message."""
    from conformance.report.common import rule_title, where

    lines = []
    order = {"must": 0, "should": 1, "advisory": 2}
    for v in sorted(result.rule_verdicts(), key=lambda v: (not v.gating, order[v.level.value])):  # (stable: rulebook
        if v.outcome not in ("failed", "error"):  # order within a level) what fails the run first, then the rest
            continue
        gate = "" if v.gating else "  (does not fail the run)"
        lines.append(f"{v.outcome.value.upper():6} {v.rule} [{v.level}] {rule_title(v.rule)}{gate}")
        lines.append(f"       in {where(v.scenarios, limit)}")
        for text in v.message.splitlines()[:2]:
            lines.append(f"       {text}")
    return lines


def _no_color() -> bool:
    import os

    return bool(os.environ.get("NO_COLOR"))


def plain_console(**kwargs: object) -> Console:
    """A rich Console for the terminal; with NO_COLOR set (https://no-color.org) it writes no escape sequence at
    all, bold and dim included."""
    return Console(highlight=False, color_system=None if _no_color() else "auto", **kwargs)  # type: ignore[arg-type]
