"""Sessions: tests, lint, typecheck, fuzz (the deep Hypothesis profile), fuzz-server and fuzz-clients (both
fuzzers, deep), reference (suite vs bundled server), selftest, bench."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.default_venv_backend = "venv"


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite, as CI runs it."""
    session.install("-e", ".[dev,reference]")
    session.run("pytest", "-q", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (E, W, F, I, B, UP, C4)."""
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy strict on conformance/ and reference_server/."""
    session.install("-e", ".[dev,reference]")
    session.run("mypy")


@nox.session
def fuzz(session: nox.Session) -> None:
    """Byte-split and decoder fuzzing with the deep Hypothesis profile."""
    session.install("-e", ".[dev,reference]")
    session.run("pytest", "-q", "tests/fuzz", *session.posargs, env={"HYPOTHESIS_PROFILE": "deep"})


@nox.session(name="fuzz-server")
def fuzz_server(session: nox.Session) -> None:
    """conformance fuzz, deep: 2,000 generated requests against the reference server (or posargs, e.g.
    --base-url URL), within 30 minutes; the report goes to reports/fuzz."""
    session.install("-e", ".[dev,reference]")
    session.run("conformance", "fuzz", "--max-examples", "2000", "--time-budget", "1800", "--max-shrinks", "200",
                "--report-dir", "reports/fuzz", *session.posargs)


@nox.session(name="fuzz-clients")
def fuzz_clients(session: nox.Session) -> None:
    """conformance fuzz-client, deep: both bundled adapters, every chunking, 16 Hypothesis cut lists per
    fixture for random, keep-alive comments inserted. Exit 1 lists what the adapters get wrong."""
    session.install("-e", ".[dev,reference]")
    for adapter in ("openai_sdk", "httpx_sse_min"):
        session.run("conformance", "fuzz-client", "--examples", "16", "--keepalive", "--",
                    "python", "-m", f"conformance.fuzz.adapters.{adapter}", success_codes=[0, 1])


@nox.session
def bench(session: nox.Session) -> None:
    """The decode benchmark against httpx-sse and the openai SDK."""
    session.install("-e", ".[dev]")
    session.run("python", "benchmarks/decode.py", *session.posargs)


@nox.session
def reference(session: nox.Session) -> None:
    """The full live suite against the bundled reference server; the reports go to reports/reference."""
    session.install("-e", ".[reference]")
    session.run("conformance", "run", "--report-dir", "reports/reference", *session.posargs)


@nox.session
def peers(session: nox.Session) -> None:
    """The real-server matrix: each peer in its own venv under .peers/, the suite run twice against each, the
    reports in reports/<server>/ and reports/matrix.md (not part of CI: the installs take minutes)."""
    session.install("-e", ".[dev,reference]")
    session.run("python", "peers/run.py", *session.posargs)


@nox.session
def selftest(session: nox.Session) -> None:
    """Every defect and legal variation; the table goes to reports/selftest/selftest.md."""
    session.install("-e", ".[reference]")
    session.run("conformance", "selftest", *session.posargs)
