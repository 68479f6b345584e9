"""The pytest plugin: the live suite as pytest tests, one per rule, grouped by category.

    pytest --pyargs conformance.suites --conformance-base-url http://127.0.0.1:8080

A second front-end over the engine (``conformance.engine.run``), beside the CLI. Options live in one
group, ``--conformance-*``, each also read from the environment variable the CLI reads. The rules
left after selection (``-k``, ``--conformance-rule``, ``--conformance-category``) decide which
scenarios run; the settings are validated at collection, before any request; the engine runs once,
on the first rule test, and every rule test reads its verdict. Under pytest-xdist each worker would
run the live suite again against the same server, so ``-n`` is refused in one sentence.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conformance.errors import ConformanceError, ExitCode
from conformance.results import RuleVerdict, RunResult
from conformance.settings import Settings

OPTIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("base-url", ("CONFORMANCE_BASE_URL", "OPENAI_BASE_URL"), "Base URL of the server under test (with or without /v1)."),
    ("api-key", ("CONFORMANCE_API_KEY", "OPENAI_API_KEY"), "Bearer token for the server (never written or printed)."),
    ("model", ("CONFORMANCE_MODEL",), "Model id to request (default: the first that GET /v1/models lists)."),
    ("profile", ("CONFORMANCE_PROFILE",), "Dialect: openai, azure, afm, lmstudio, llamacpp, vllm, ollama."),
    ("expect", ("CONFORMANCE_EXPECT",), "Capabilities the server must have, comma-separated."),
    ("baseline", ("CONFORMANCE_BASELINE",), "Known failures (JSON from `conformance baseline`)."),
    ("report-dir", ("CONFORMANCE_REPORT_DIR",), "Where results.json, junit.xml, report.md, report.html go."),
    ("timeout", ("CONFORMANCE_TIMEOUT",), "Seconds one response may take in all (default 120)."),
    ("workers", ("CONFORMANCE_WORKERS",), "Scenarios run at once (default 4)."),
    ("run-timeout", ("CONFORMANCE_RUN_TIMEOUT",), "Seconds the whole run may take (default max(300, 10 x timeout))."),
    ("max-body", ("CONFORMANCE_MAX_BODY",), "The most of one response body read and judged (default 64M)."),
)
LEVEL_MARKERS = {"must": "a must-level conformance rule (a failure fails the run)",
                 "should": "a should-level conformance rule (fails the run with --conformance-strict)",
                 "advisory": "an advisory conformance rule (reported, never fails the run)"}
PROGRESS_EVERY = 10  # without -v and without a terminal, a progress line every this many scenarios
XDIST_REFUSED = ("the live conformance suite runs once per session against one server, and pytest-xdist would run "
                 "it once per worker: run it without -n")


def _env(names: tuple[str, ...]) -> str | None:
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the --conformance-* options."""
    group = parser.getgroup("conformance", "chat-conformance live suite")
    for name, env, help_text in OPTIONS:
        group.addoption(f"--conformance-{name}", dest=f"conformance_{name.replace('-', '_')}", default=_env(env),
                        help=f"{help_text} [env {', '.join(env)}]")
    group.addoption("--conformance-category", dest="conformance_category", action="append",
                    default=_split_env("CONFORMANCE_CATEGORY"), help="Only rules of this category (repeatable).")
    group.addoption("--conformance-rule", dest="conformance_rule", action="append",
                    default=_split_env("CONFORMANCE_RULE"), help="Only this rule id (repeatable).")
    group.addoption("--conformance-scenario", dest="conformance_scenario", action="append",
                    default=_split_env("CONFORMANCE_SCENARIO"),
                    help="Only this scenario (repeatable; `conformance scenarios` lists them).")
    group.addoption("--conformance-strict", dest="conformance_strict", action="store_true",
                    default=os.environ.get("CONFORMANCE_STRICT", "").lower() in ("1", "true", "yes", "on"),
                    help="Should-level failures fail the run [env CONFORMANCE_STRICT].")
    group.addoption("--conformance-reference", dest="conformance_reference", action="store_true", default=False,
                    help="Start the bundled reference server and run against it.")


def _split_env(name: str) -> list[str]:
    return [v.strip() for v in os.environ.get(name, "").split(",") if v.strip()]


def pytest_configure(config: pytest.Config) -> None:
    """Create the run state, register the marker, refuse -n for the live suite."""
    config.addinivalue_line("markers", "conformance_rule(id): a live conformance rule")
    for level, what in LEVEL_MARKERS.items():
        config.addinivalue_line("markers", f"{level}: {what} (select with -m {level})")
    config.stash[STATE] = ConformanceState(config)
    if _wants_live_suite(config) and (config.getoption("numprocesses", None) or 0):
        pytest.exit(f"conformance: {XDIST_REFUSED}", returncode=int(ExitCode.USAGE))


def _wants_live_suite(config: pytest.Config) -> bool:
    args = [str(a) for a in config.invocation_params.args]
    return any("conformance.suites" in a or "conformance/suites" in a or a.startswith("--conformance-") for a in args)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect rule tests outside --conformance-category / --conformance-rule, then (after -k has
    deselected its share) build and validate the settings for the rules that are left."""
    state = config.stash[STATE]
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("conformance_rule")
        if marker is None or state.selected(str(marker.args[0])):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    rules = {str(m.args[0]) for item in items if (m := item.get_closest_marker("conformance_rule")) is not None}
    if not rules:
        return
    if hasattr(config, "workerinput"):  # a worker of pytest-xdist, started without our -n check
        pytest.exit(f"conformance: {XDIST_REFUSED}", returncode=int(ExitCode.USAGE))
    state.prepare(frozenset(rules))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A rule test is reported by its module's name, wherever the package is installed: JUnit classnames read
    ``conformance.suites.test_chunks``, never ``.venv.lib.python3.11.site-packages...``."""
    outcome = yield
    if item.get_closest_marker("conformance_rule") is not None and isinstance(item, pytest.Function):
        report = outcome.get_result()
        report.nodeid = f"{item.module.__name__.replace('.', '/')}.py::{item.name}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the reports and set the exit status from the verdicts, not from pytest's counts."""
    state = session.config.stash[STATE]
    if state.result is None:
        if state.error_code is not None:
            session.exitstatus = state.error_code
        return
    nothing = state.result.judged_nothing()
    if nothing is not None and state.settings is not None:  # a selection that judges no rule is never a pass
        session.exitstatus = int(ExitCode.USAGE)
        state.error_message = f"nothing selected: the chosen rules and scenarios judged no rule ({state.scrub(nothing)})"
        return
    state.write_reports()
    if session.exitstatus in (0, 1):  # combined, never replaced: a failing test of the session's own stays failing
        failed = state.result.failed_gate() or session.exitstatus == 1
        session.exitstatus = int(ExitCode.FAILED if failed else ExitCode.OK)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The failing rules, a per-category summary, the capabilities and where the reports are."""
    state = config.stash[STATE]
    if state.error_message:
        terminalreporter.write_line(f"conformance: {state.error_message}", red=True, bold=True)
    if state.result is None:
        return
    from conformance.report.terminal import summary_lines

    terminalreporter.section("chat-conformance")
    for line in summary_lines(state.result):
        terminalreporter.write_line(state.scrub(line))
    if state.settings is not None and state.settings.report_dir is not None:
        terminalreporter.write_line(f"reports: {state.settings.report_dir}/results.json, junit.xml, report.md, "
                                    "report.html")


class ConformanceState:
    """The settings, the result of the one run and the verdict of each rule."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings: Settings | None = None
        self.result: RunResult | None = None
        self.verdicts: dict[str, RuleVerdict] = {}
        self.error_code: int | None = None
        self.error_message = ""
        opt = config.option
        from conformance.settings import load_config

        self.file_values: dict[str, Any] = {}
        self.file_error = ""
        try:
            self.file_values, _ = load_config(Path(str(config.invocation_params.dir)))
        except ConformanceError as exc:  # reported when the live suite is prepared, not for other runs
            self.file_error = str(exc)
        self.categories = set(getattr(opt, "conformance_category", []) or self.file_values.get("category", []))
        self.rules = set(getattr(opt, "conformance_rule", []) or self.file_values.get("rule", []))
        self.attempted = False
        self.given: list[str] = []  # the key as given, before its check (masked in every message too)

    def selected(self, rule_id: str) -> bool:
        from conformance.rules import RULES_BY_ID

        if not self.categories and not self.rules:
            return True
        return rule_id in self.rules or RULES_BY_ID[rule_id].category in self.categories

    def prepare(self, rules: frozenset[str]) -> None:
        """Build and validate the settings (before any request); exit 2 in one sentence if they are wrong."""
        from conformance.settings import build_settings

        opt = self.config.option
        if self.file_error:
            self._fail(ExitCode.USAGE, self.file_error)
        file_values = self.file_values

        def value(key: str) -> Any:
            """A flag or its environment variable, else the config file's value (the same names as the CLI's)."""
            given = getattr(opt, f"conformance_{key.replace('-', '_')}", None)
            return given if given not in (None, [], False, "") else file_values.get(key, given)

        base_url = value("base-url")
        if not base_url and not getattr(opt, "conformance_reference", False):
            self._fail(ExitCode.USAGE, "no base URL: pass --conformance-base-url (or set OPENAI_BASE_URL), "
                                       "or --conformance-reference for the bundled server")
        self.given = [str(v) for v in (value("api-key"), *(os.environ.get(n) for n in OPTIONS[1][1])) if v]
        try:
            self.settings = build_settings(
                base_url=base_url or None, api_key=value("api-key"), model=value("model"), profile=value("profile"),
                expect=value("expect"), rules=sorted(rules), scenarios=value("scenario") or None,
                strict=bool(value("strict")), baseline=value("baseline"),
                report_dir=value("report-dir") or "reports/latest", timeout=value("timeout"), workers=value("workers"),
                run_timeout=value("run-timeout"), max_body=value("max-body"))
        except ConformanceError as exc:
            self._fail(exc.exit_code, str(exc))
        assert self.settings is not None
        for notice in self.settings.notices:
            self.config.get_terminal_writer().line(f"conformance: note: {notice}", yellow=True)

    def scrub(self, text: str) -> str:
        """Text for pytest's terminal and reports: secrets masked (as given and as sent, in every spelling a
        traceback gives them), controls and invalid Unicode escaped."""
        from conformance.secrets import Scrubber
        from conformance.wire.untrusted import printable

        return printable(Scrubber((*(self.settings.secrets if self.settings else ()), *self.given)).text(text))

    def _crashed(self, exc: Exception) -> None:
        """A bug of the suite's own while the live suite ran: one sentence, the traceback (masked) in crash.txt in
        the report dir, exit 4, as the CLI does."""
        import traceback

        where = ""
        folder = self.settings.report_dir if self.settings is not None else None
        if folder is not None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "crash.txt").write_text(self.scrub("".join(traceback.format_exception(exc))), encoding="utf-8")
                where = f"; the traceback is in {folder / 'crash.txt'}"
            except OSError:
                pass
        self._fail(ExitCode.INTERNAL, f"internal error, please report it: {type(exc).__name__}: {exc}{where}")

    def run(self) -> RunResult:
        """Run the engine once; later calls give the same result (or skip after an error)."""
        if self.result is not None:
            return self.result
        if self.attempted or self.settings is None:
            pytest.skip(f"no run: {self.error_message or 'the settings were not prepared'}")
        self.attempted = True
        import contextlib

        from conformance.engine import events as ev
        from conformance.engine.run import run as engine_run

        writer = self.config.get_terminal_writer()
        progress = _Progress(writer, self.config.option.verbose > 0, self.scrub)
        capture = self.config.pluginmanager.getplugin("capturemanager")
        try:
            # the run happens inside the first rule test: pytest's capture is set aside while it runs, so its
            # progress reaches the terminal as it goes (as -s would), not after the test
            with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
                for event in engine_run(self.settings):
                    progress.handle(event)
                    if isinstance(event, ev.RunFinished):
                        self.result = event.result
        except ConformanceError as exc:
            self._fail(exc.exit_code, str(exc))
        except Exception as exc:
            self._crashed(exc)
        assert self.result is not None
        self.verdicts = {v.rule: v for v in self.result.rule_verdicts()}
        return self.result

    def _fail(self, code: int, message: str) -> None:
        self.error_code, self.error_message = int(code), self.scrub(message)
        pytest.exit(f"conformance: {self.error_message}", returncode=int(code))

    def write_reports(self) -> None:
        from conformance.report import write_all
        from conformance.secrets import Scrubber

        assert self.result is not None and self.settings is not None
        if self.settings.report_dir is not None:
            write_all(self.result, self.settings.report_dir, Scrubber(self.settings.secrets))

    def entries(self, rule_id: str) -> list[Any]:
        return [c for c in self.run().checks if c.rule == rule_id]


class _Progress:
    """The live run as pytest users expect it: a line per scenario with -v; otherwise one progress line, rewritten
    in place on a terminal, or a line every ``PROGRESS_EVERY`` scenarios in a log (CI), so a run of a minute is never
    silent."""

    def __init__(self, writer: Any, verbose: bool, scrub: Any) -> None:
        self.writer, self.verbose, self.scrub = writer, verbose, scrub
        self.tty = bool(getattr(writer, "isatty", False)) and not os.environ.get("CI")
        self.started = 0.0
        self.open = False

    def handle(self, event: Any) -> None:
        import time

        from conformance.engine import events as ev
        from conformance.report.terminal import LiveProgress

        if isinstance(event, ev.RunStarted):
            self.started = time.monotonic()
            self.writer.line("")  # (pytest has written the module's name on this line)
            self._line(f"conformance: the live suite against {event.base_url}, model {event.model}: "
                       f"{len(event.scenarios)} scenarios (ends within {event.bound_s:.0f} s)")
        elif isinstance(event, ev.ScenarioFinished) and self.verbose:
            self._line("")
            LiveProgress(_WriterConsole(self.writer), scrub=self.scrub).handle(event)  # type: ignore[arg-type]
        elif isinstance(event, ev.ScenarioFinished):
            text = (f"conformance: {event.done}/{event.total} scenarios, {time.monotonic() - self.started:.0f} s "
                    f"(last: {event.name} {event.status if event.status is not None else '—'})")
            if self.tty:
                self.writer.write("\r" + self.scrub(text).ljust(100)[:100], flush=True)
                self.open = True
            elif event.done % PROGRESS_EVERY == 0 or event.done == event.total:
                self._line(text)
        elif isinstance(event, ev.RoutesProbed) and event.unserved:
            self._line(f"conformance: routes not served: {', '.join(n for n, _ in event.unserved)} "
                       f"({event.unsent} scenarios not sent)")
        elif isinstance(event, ev.RunFinished):
            self._line(f"conformance: judged in {time.monotonic() - self.started:.1f} s")

    def _line(self, text: str) -> None:
        if self.open:
            self.writer.line("")
            self.open = False
        if not text:
            self.writer.line("")
            return
        self.writer.line(self.scrub(text))


class _WriterConsole:
    """Just enough of a rich Console for LiveProgress to print through pytest's terminal writer."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer

    def print(self, text: str, **_: Any) -> None:
        self.writer.line(str(text))


STATE = pytest.StashKey[ConformanceState]()


@pytest.fixture(scope="session")
def conformance_state(pytestconfig: pytest.Config) -> ConformanceState:
    """The run state of this session."""
    return pytestconfig.stash[STATE]


def rule_verdict(state: ConformanceState, rule_id: str) -> None:
    """Pass, fail or skip one rule from its verdict across all scenarios of the run."""
    state.run()
    verdict = state.verdicts.get(rule_id)
    if verdict is None:
        pytest.skip("this rule was not judged in this run")
    message = state.scrub(verdict.message)
    if verdict.outcome == "error":
        pytest.fail(f"{rule_id}: internal error in its check: {message}", pytrace=False)
    if verdict.outcome == "failed" and verdict.gating:
        entries = [e for e in state.entries(rule_id) if e.outcome == "failed" and not e.known][:5]
        lines = [state.scrub(f"[{e.scenario}] {e.message}\n  reproduce: {e.reproducer}") for e in entries] or [message]
        pytest.fail(f"{rule_id} ({verdict.level}) failed in {len(verdict.scenarios)} scenario(s):\n" + "\n".join(lines),
                    pytrace=False)
    if verdict.outcome == "failed":  # a finding that does not gate the run (should without --strict, advisory,
        # or known in the baseline): never shown as a pass
        pytest.xfail(f"{rule_id} ({verdict.level}) failed, does not fail the run: {message}")
    if verdict.outcome == "skipped":
        pytest.skip(message)


__all__ = ["ConformanceState", "conformance_state", "rule_verdict"]
