"""Sessions: tests, lint, typecheck, fuzz (the deep Hypothesis profile), fuzz-server and fuzz-clients (both
fuzzers, deep), reference (suite vs bundled server), selftest, bench, peers, release (the wheel and the tag)."""

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


@nox.session
def release(session: nox.Session) -> None:
    """Cut a release from this tree: check the version (0.<rule set>.<patch>), the CHANGELOG heading and the pinned
    recipes agree (tests/test_release.py, tests/engine/test_action.py); build the wheel and sdist into dist/; install
    the wheel (with the reference extra) in a fresh venv outside the checkout and run the suite against the bundled
    reference server from there; then print the tag commands (pushing the tag is what a workflow pins)."""
    import pathlib
    import tempfile

    session.install("-e", ".[dev,reference]", "build")
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_release.py",
                "tests/engine/test_action.py::test_the_recipe_pins_the_released_version",
                "tests/engine/test_action.py::test_every_input_the_recipe_sets_is_an_input_of_action_yml")
    session.run("python", "-m", "build", "--outdir", "dist")
    version = session.run("python", "-c", "import conformance; print(conformance.__version__)", silent=True).strip()
    wheel = pathlib.Path("dist", f"chat_conformance-{version}-py3-none-any.whl").resolve()
    with tempfile.TemporaryDirectory(prefix="conformance-release-") as tmp:
        venv = pathlib.Path(tmp, "venv")
        session.run("python", "-m", "venv", str(venv), external=True)
        session.run(str(venv / "bin" / "pip"), "install", "--quiet", f"{wheel}[reference]", external=True)
        with session.chdir(tmp):
            session.run(str(venv / "bin" / "conformance"), "--version", external=True)
            session.run(str(venv / "bin" / "conformance"), "run", "--scenario", "stream-plain,responses-stream,"
                        "messages-stream,ollama-chat", "--report-dir", str(pathlib.Path(tmp, "report")), external=True)
    session.log(f"built {wheel.name}; tag and push it:\n  git tag -a v{version} -m 'chat-conformance {version}'\n"
                f"  git push origin v{version}")
