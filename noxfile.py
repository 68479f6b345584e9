"""Sessions: tests, lint, typecheck, fuzz (the deep Hypothesis profile), reference (suite vs bundled server)."""

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
def selftest(session: nox.Session) -> None:
    """Every defect and legal variation; the table goes to reports/selftest/selftest.md."""
    session.install("-e", ".[reference]")
    session.run("conformance", "selftest", *session.posargs)
