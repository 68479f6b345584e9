"""``run(settings)``: the one engine every front-end drives. It yields typed events as the run goes
and ends with ``RunFinished`` holding the ``RunResult``.

The live phase (discovery, then the scenarios) runs in a worker thread that puts events on a
queue; this generator yields them as they come, so a front-end shows progress while requests are
in flight. Judging reads only the recorded outcomes (``judge_run``), and the wire log saves them,
so ``rejudge`` of that log gives the verdicts the live run gave.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.engine import events as ev
from conformance.engine import wirelog
from conformance.engine.bounds import run_bound
from conformance.engine.judge import judge_run, scenarios_for
from conformance.engine.outcome import Outcome
from conformance.engine.runner import Runner
from conformance.protocols import REGISTRY
from conformance.results import RunResult
from conformance.rules import RULESET_VERSION
from conformance.scenarios import BY_NAME, CAPABILITIES, protocol_of
from conformance.secrets import Scrubber
from conformance.settings import Settings

TOOL = {"name": "chat-conformance", "version": __version__, "ruleset": RULESET_VERSION}
_DONE = object()


INTERRUPTED = "interrupted"  # why the rest of a run stopped by Ctrl-C was cut
INTERRUPT_GRACE_S = 2.0  # how long the scenarios in flight get to end after Ctrl-C


class _Failure:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


REPORT_FILES = ("results.json", "junit.xml", "report.md", "report.html", "crash.txt", "badge.svg", "wire.har")
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


def run(settings: Settings) -> Iterator[ev.Event]:
    """Run the live suite; the last event is ``RunFinished``. ``ConfigError``/``Unreachable`` propagate."""
    server = None
    if settings.report_dir is not None:
        clear_reports(settings.report_dir)  # the report dir holds this run's files only, whatever this run ends in
    try:
        if settings.base_url is None:
            from conformance.engine.servers import reference

            yield ev.ServerStarting()
            server = reference()
            settings = replace(settings, base_url=server.base_url, expect=settings.expect or REFERENCE_CAPABILITIES,
                               limits=replace(settings.limits, use_proxy=False))  # on 127.0.0.1: never a proxy
        yield from _run_live(settings, reference=server is not None)
    finally:
        if server is not None:
            server.stop()


REFERENCE_CAPABILITIES = frozenset(CAPABILITIES) - {"images"}  # every one but images: its model has no vision tower


def _run_live(settings: Settings, reference: bool) -> Iterator[ev.Event]:
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    clock = time.monotonic()
    names = [n for n in scenarios_for(settings.rules, settings.scenarios, settings.profile, settings.protocols)
             if n not in settings.exclude_scenarios]
    events: queue.Queue[Any] = queue.Queue()
    runner = Runner(settings, emit=events.put)
    if settings.report_dir is not None and settings.wire_log:  # each exchange's files written as its scenario ends
        runner.ahead = wirelog.Ahead(settings.report_dir, Scrubber(settings.secrets))
    try:
        yield from _live(settings, reference, runner, events, names, started, clock)
    finally:
        if runner.ahead is not None:
            runner.ahead.close()


def _live(settings: Settings, reference: bool, runner: Runner, events: queue.Queue[Any], names: list[str],
          started: str, clock: float) -> Iterator[ev.Event]:
    box: list[list[Outcome]] = []

    def live() -> None:
        try:
            if settings.wait > 0:
                events.put(ev.ServerWaiting(str(settings.base_url), settings.wait))
                runner.wait_for_server(settings.wait)
            runner.discover(run_protocols(names))
            bound = run_bound(settings.limits, settings.workers, names, settings.run_timeout)
            events.put(ev.RunStarted(runner.base_url, runner.model, settings.profile, tuple(names), reference, bound))
            box.append(runner.record_all([BY_NAME[n] for n in names]))
            events.put(_DONE)
        except BaseException as exc:  # re-raised in the consumer's thread, with its traceback
            events.put(_Failure(exc))

    thread = threading.Thread(target=live, name="conformance-live", daemon=True)
    thread.start()
    interrupted = False
    try:
        while True:
            item = events.get()
            if item is _DONE:
                break
            if isinstance(item, _Failure):
                raise item.exc
            yield item
    except KeyboardInterrupt:
        # Ctrl-C is an engine event (issue 44): nothing more is sent, the scenarios in flight get a moment to end,
        # and what was recorded is judged and reported as an incomplete run ("interrupted"); the front-end exits 130
        interrupted = True
        runner.stop_label = INTERRUPTED
        runner.stopped = f"{INTERRUPTED} (Ctrl-C) after {time.monotonic() - clock:.1f} s"
    finally:
        runner.close()
    if interrupted:
        thread.join(INTERRUPT_GRACE_S)
        outcomes = runner.recorded_so_far()
        ran = {o.scenario.name for o in outcomes}
        runner.not_run = [n for n in names if n not in ran]
    else:
        thread.join()
        outcomes = box[0]
    duration = time.monotonic() - clock
    unsent = {n: runner.unsent[n] for n in names if n in runner.unsent}  # in run order
    incomplete: dict[str, Any] | None = None
    if runner.not_run or interrupted:
        reason = runner.stopped or f"the run timeout of {settings.run_timeout:g} s was reached"
        incomplete = {"reason": reason, "not_run": sorted(runner.not_run, key=names.index)}
        if interrupted:
            incomplete["interrupted"] = True
    if settings.report_dir is not None and settings.wire_log:
        wirelog.save(settings.report_dir, wirelog.WireRun(TOOL, started, duration, runner.model,
                                                          settings_record(settings), incomplete, unsent),
                     outcomes, Scrubber(settings.secrets), runner.ahead)
    result = judge_run(outcomes, settings, runner.model, tool=TOOL, started_at=started, duration_s=duration,
                       incomplete=incomplete, unsent=unsent)
    yield from verdict_events(result)


def run_protocols(names: list[str]) -> tuple[str, ...]:
    """The protocols the run's scenarios speak, in registry order (every one when none speaks a protocol)."""
    spoken = {protocol_of(BY_NAME[n]) for n in names}
    return tuple(p for p in REGISTRY if p in spoken) or REGISTRY


def verdict_events(result: RunResult) -> Iterator[ev.Event]:
    """The findings, each rule's verdict, then ``RunFinished``."""
    for entry in result.checks:
        if entry.outcome in ("failed", "error"):
            yield ev.FindingReported(entry)
    for v in result.rule_verdicts():
        yield ev.RuleJudged(v.rule, v.level, v.outcome, v.message, v.scenarios)
    yield ev.RunFinished(result)


def execute(settings: Settings) -> RunResult:
    """Run to the end and return the result (for callers that show no progress)."""
    for event in run(settings):
        if isinstance(event, ev.RunFinished):
            return event.result
    raise RuntimeError("the engine ended without a result")  # pragma: no cover - run() always finishes


def settings_record(settings: Settings) -> dict[str, Any]:
    """What the wire log keeps of the settings (never the key): enough to judge the run again."""
    return {"base_url": settings.base_url, "profile": settings.profile, "expect": sorted(settings.expect),
            "rules": sorted(settings.rules) if settings.rules is not None else None, "strict": settings.strict,
            "known_failures": [list(k) for k in settings.known_failures], "timeout": settings.timeout,
            "workers": settings.workers, "run_timeout": settings.run_timeout, "limits": asdict(settings.limits),
            "label": settings.label}


def rejudge(directory: Path, settings_changes: dict[str, Any] | None = None) -> Iterator[ev.Event]:
    """Judge a saved wire log again (optionally under another profile, strictness or baseline)."""
    saved, outcomes = wirelog.load(directory)
    record = saved.settings
    settings = Settings(base_url=record["base_url"], profile=record["profile"], expect=frozenset(record["expect"]),
                        rules=frozenset(record["rules"]) if record["rules"] is not None else None,
                        strict=bool(record["strict"]),
                        known_failures=tuple((str(r), str(s)) for r, s in record["known_failures"]),
                        timeout=float(record["timeout"]), workers=int(record["workers"]), label=record.get("label"))
    settings = replace(settings, **(settings_changes or {}))
    yield ev.RunStarted(str(settings.base_url), saved.model, settings.profile,
                        tuple(o.scenario.name for o in outcomes), False)
    # the rules that judge it are today's: the report names their rule set (the tool version stays the recorder's)
    result = judge_run(outcomes, settings, saved.model, tool={**saved.tool, "ruleset": RULESET_VERSION},
                       started_at=saved.started_at,
                       duration_s=saved.duration_s, incomplete=saved.incomplete, unsent=saved.unsent)
    yield from verdict_events(result)
