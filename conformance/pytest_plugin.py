"""The pytest plugin: the live suite as pytest tests, one per rule, grouped by category.

    pytest --pyargs conformance.suites --conformance-base-url http://127.0.0.1:8080

Options live in one group, ``--conformance-*``, each also read from an environment variable. The
run state is one ``ConformanceState`` on ``config``. The scenarios run once, on first use, and
every rule test reads their verdicts; the reports are written when the session finishes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conformance.results import RunResult
from conformance.target import ConfigError, Unreachable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3

OPTIONS: tuple[tuple[str, str | None, str], ...] = (
    ("base-url", "OPENAI_BASE_URL", "Base URL of the server under test (with or without /v1)."),
    ("api-key", "OPENAI_API_KEY", "Bearer token for the server under test (never written to reports)."),
    ("model", "CONFORMANCE_MODEL", "Model id to request (default: the first that GET /v1/models lists)."),
    ("profile", "CONFORMANCE_PROFILE", "Dialect: openai, azure, afm, lmstudio, llamacpp, vllm, ollama."),
    ("expect", "CONFORMANCE_EXPECT", "Capabilities the server must have, comma-separated."),
    ("baseline", "CONFORMANCE_BASELINE", "Known failures (JSON from `conformance baseline`)."),
    ("report-dir", "CONFORMANCE_REPORT_DIR", "Where to write results.json, junit.xml, report.md, report.html."),
    ("timeout", "CONFORMANCE_TIMEOUT", "Seconds one response may take in all (default 120)."),
    ("workers", "CONFORMANCE_WORKERS", "Scenarios run at once (default 4)."),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the --conformance-* options."""
    group = parser.getgroup("conformance", "chat-conformance live suite")
    for name, env, help_text in OPTIONS:
        group.addoption(f"--conformance-{name}", dest=f"conformance_{name.replace('-', '_')}",
                        default=os.environ.get(env) if env else None, help=f"{help_text} [env {env}]")
    group.addoption("--conformance-category", dest="conformance_category", action="append", default=[],
                    help="Only rules of this category (repeatable).")
    group.addoption("--conformance-rule", dest="conformance_rule", action="append", default=[],
                    help="Only this rule id (repeatable).")
    group.addoption("--conformance-scenario", dest="conformance_scenario", action="append", default=[],
                    help="Only this scenario (repeatable; `conformance scenarios` lists them).")
    group.addoption("--conformance-strict", dest="conformance_strict", action="store_true",
                    default=os.environ.get("CONFORMANCE_STRICT") == "1", help="Should-level failures fail the run.")
    group.addoption("--conformance-reference", dest="conformance_reference", action="store_true", default=False,
                    help="Start the bundled reference server and run against it.")


def pytest_configure(config: pytest.Config) -> None:
    """Create the run state and register the marker."""
    config.addinivalue_line("markers", "conformance_rule(id): a live conformance rule")
    config.stash[STATE] = ConformanceState(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect rule tests outside --conformance-category / --conformance-rule."""
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


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the reports and set the exit status from the verdicts, not from pytest's counts."""
    state = session.config.stash[STATE]
    state.stop_server()
    if state.result is None:
        if state.error_code is not None:
            session.exitstatus = state.error_code
        return
    state.write_reports()
    if session.exitstatus in (0, 1):
        session.exitstatus = EXIT_FAILED if state.result.failed_gate() else EXIT_OK


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """A per-category summary, the capabilities and where the reports are."""
    state = config.stash[STATE]
    if state.error_message:
        terminalreporter.write_line(f"conformance: {state.error_message}", red=True, bold=True)
    if state.result is None:
        return
    from conformance.report.terminal import summary_lines

    terminalreporter.section("chat-conformance")
    for line in summary_lines(state.result):
        terminalreporter.write_line(line)
    if state.report_dir is not None:
        terminalreporter.write_line(f"reports: {state.report_dir}/results.json, junit.xml, report.md, report.html")


class ConformanceState:
    """Options, the target, the server we started (if any) and the result of the run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.result: RunResult | None = None
        self.error_code: int | None = None
        self.error_message = ""
        self.server: Any = None
        opt = config.option
        self.categories = set(getattr(opt, "conformance_category", []) or [])
        self.rules = set(getattr(opt, "conformance_rule", []) or [])
        report_dir = getattr(opt, "conformance_report_dir", None)
        self.report_dir = Path(report_dir) if report_dir else Path("reports/latest")
        self.attempted = False

    def selected(self, rule_id: str) -> bool:
        from conformance.rules import RULES_BY_ID

        if not self.categories and not self.rules:
            return True
        return rule_id in self.rules or RULES_BY_ID[rule_id].category in self.categories

    def rule_ids(self) -> set[str] | None:
        from conformance.rules import RULES

        if not self.categories and not self.rules:
            return None
        return {r.id for r in RULES if self.selected(r.id)}

    def run(self) -> RunResult:
        """Run the scenarios once; later calls give the same result (or skip after an error)."""
        if self.result is not None:
            return self.result
        if self.attempted:
            pytest.skip(f"no run: {self.error_message}")
        self.attempted = True
        try:
            self.result = self._run()
        except ConfigError as exc:
            self._fail(EXIT_USAGE, str(exc))
        except Unreachable as exc:
            self._fail(EXIT_UNREACHABLE, str(exc))
        return self.result  # type: ignore[return-value]

    def _fail(self, code: int, message: str) -> None:
        self.error_code, self.error_message = code, message
        pytest.exit(f"conformance: {message}", returncode=code)

    def _run(self) -> RunResult:
        from conformance.baseline import apply_baseline, load_baseline
        from conformance.runner import Runner

        target = self.target()
        writer = self.config.get_terminal_writer()
        writer.line(f"chat-conformance: {target.base_url} (profile {target.profile}, {target.workers} workers)")
        verbose = self.config.option.verbose > 0
        runner = Runner(target, log=(lambda line: writer.line("  " + line)) if verbose else None)
        try:
            scenarios = set(getattr(self.config.option, "conformance_scenario", []) or []) or None
            result = runner.run(self.rule_ids(), scenarios)
        finally:
            runner.close()
        baseline = getattr(self.config.option, "conformance_baseline", None)
        if baseline:
            apply_baseline(result, load_baseline(Path(baseline)))
        return result

    def target(self) -> Any:
        from conformance.client import Limits
        from conformance.target import Target, normalize_base_url

        opt = self.config.option
        base_url = getattr(opt, "conformance_base_url", None)
        if getattr(opt, "conformance_reference", False) and not base_url:
            base_url = self.start_reference()
        if not base_url:
            raise ConfigError("no base URL: pass --conformance-base-url (or set OPENAI_BASE_URL)")
        timeout = float(getattr(opt, "conformance_timeout", None) or 120)
        workers = int(getattr(opt, "conformance_workers", None) or 4)
        expect = frozenset(c.strip() for c in (getattr(opt, "conformance_expect", None) or "").split(",") if c.strip())
        if self.server is not None and not expect:  # the bundled reference server claims every capability
            from conformance.scenarios import CAPABILITIES

            expect = frozenset(CAPABILITIES)
        return Target(base_url=normalize_base_url(base_url), api_key=getattr(opt, "conformance_api_key", None),
                      model=getattr(opt, "conformance_model", None),
                      profile=getattr(opt, "conformance_profile", None) or "openai", expect=expect,
                      limits=Limits(total=timeout, idle=min(30.0, timeout), first_byte=min(60.0, timeout)),
                      workers=workers, strict=bool(getattr(opt, "conformance_strict", False)))

    def start_reference(self) -> str:
        from conformance.servers import reference

        self.server = reference()
        return str(self.server.base_url)

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def write_reports(self) -> None:
        from conformance.report import write_all

        assert self.result is not None
        self.report_dir.mkdir(parents=True, exist_ok=True)
        write_all(self.result, self.report_dir)

    def entries(self, rule_id: str) -> list[Any]:
        return [c for c in self.run().checks if c.rule == rule_id]


STATE = pytest.StashKey[ConformanceState]()


@pytest.fixture(scope="session")
def conformance_state(pytestconfig: pytest.Config) -> ConformanceState:
    """The run state of this session."""
    return pytestconfig.stash[STATE]


def rule_verdict(state: ConformanceState, rule_id: str) -> None:
    """Pass, fail or skip one rule from its entries across all scenarios."""
    entries = state.entries(rule_id)
    result = state.run()
    gating = ("must", "should") if result.strict else ("must",)
    failed = [e for e in entries if e.outcome == "failed" and not e.known]
    errors = [e for e in entries if e.outcome == "error"]
    if errors:
        pytest.fail("\n".join(f"[{e.scenario}] {e.message}" for e in errors), pytrace=False)
    if failed and failed[0].level in gating:
        lines = [f"[{e.scenario}] {e.message}\n  reproduce: {e.reproducer}" for e in failed[:5]]
        pytest.fail(f"{rule_id} ({failed[0].level}) failed in {len(failed)} scenario(s):\n" + "\n".join(lines),
                    pytrace=False)
    if not any(e.outcome in ("passed", "failed") for e in entries):
        reasons = sorted({e.message for e in entries if e.outcome == "skipped"})
        pytest.skip(reasons[0] if reasons else "no scenario showed this rule")


__all__ = ["ConformanceState", "conformance_state", "rule_verdict"]
