"""The key in every path (issue 57): a key or header pasted with a line break, or that no HTTP header can carry, is
one sentence and exit 2 before anything is sent, on every way in (flag, variables, config file, -H, the pytest plugin,
`conformance fuzz`); a single trailing line break is removed and said; and an internal error writes no key, in any
spelling, to the terminal or crash.txt, and exits 4."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import cli
from conformance.secrets import Scrubber
from tests.hostile.servers import HostileServer, answer

KEY = "sk-proj-pastedKey0123456789abcdef"
SECRET = "pastedKey0123456789abcdef"  # the distinctive part: never on the terminal or in a file


def conformance(*argv: str, env: dict[str, str] | None = None, cwd: Path | None = None
                ) -> subprocess.CompletedProcess[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("API_KEY") and k != "CONFORMANCE_HEADERS"}
    return subprocess.run([sys.executable, "-m", "conformance", *argv], capture_output=True, timeout=120, check=False,
                          env={**clean, **(env or {})}, cwd=cwd)


def leaked(proc: subprocess.CompletedProcess[bytes], *folders: Path) -> list[str]:
    """Where the key's distinctive part shows: the terminal, or a file under the folders."""
    places = [name for name, text in (("stdout", proc.stdout), ("stderr", proc.stderr)) if SECRET.encode() in text]
    for folder in folders:
        places += [str(p) for p in folder.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    return places


def refused(proc: subprocess.CompletedProcess[bytes], *folders: Path) -> str:
    """The one sentence of an exit-2 refusal (after checking it is one, with no traceback and no key)."""
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err and err.count("conformance:") == 1, err
    assert not leaked(proc, *folders)
    return err


INSIDE = f"{KEY}\nsecond-line"  # a line break inside: no way to tell which part is the key
RUN = ["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]


def test_a_key_flag_with_a_line_break_inside_is_refused(tmp_path: Path) -> None:
    err = refused(conformance(*RUN, "--api-key", INSIDE, "--report-dir", str(tmp_path)), tmp_path)
    assert "the API key has a line break at character 34 of 45" in err


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "CONFORMANCE_API_KEY"])
def test_a_key_variable_with_a_line_break_inside_is_refused(tmp_path: Path, variable: str) -> None:
    err = refused(conformance(*RUN, "--report-dir", str(tmp_path), env={variable: INSIDE}), tmp_path)
    assert "the API key has a line break" in err


def test_a_key_from_the_config_file_with_a_line_break_inside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "conformance.toml").write_text('api-key = "${PASTED}"\nbase-url = "http://127.0.0.1:9/v1"\n')
    err = refused(conformance("run", "--model", "m", "--report-dir", "out", cwd=tmp_path, env={"PASTED": INSIDE}),
                  tmp_path)
    assert "the API key has a line break" in err


@pytest.mark.parametrize(("value", "says"), [("key-\u00e9t\u00e9-1234", "not ASCII at character 5 of 12"),
                                             ("key\x1besc-1234", "has a control character at character 4"),
                                             ("key\tinside-1234", "has a control character")])
def test_a_key_no_header_can_carry_is_refused(value: str, says: str) -> None:
    err = refused(conformance(*RUN, "--api-key", value))
    assert says in err and value not in err


def test_a_header_value_with_a_line_break_is_refused(tmp_path: Path) -> None:
    err = refused(conformance(*RUN, "-H", f"X-Gateway-Key: {INSIDE}", "--report-dir", str(tmp_path)), tmp_path)
    assert "the value of --header 'X-Gateway-Key' has a line break" in err


def test_a_header_line_without_a_colon_is_refused_without_showing_it() -> None:
    err = refused(conformance(*RUN, "-H", f"Authorization Bearer {KEY}"))
    assert "--header number 1 is not a header line" in err


def test_bytes_that_are_not_utf8_are_refused_in_a_header_a_key_and_a_url() -> None:
    # what a shell passes on for a value pasted in another encoding: argv bytes that are not UTF-8
    header = refused(conformance(*RUN, "-H", os.fsdecode(b"X-Team: caf\xe9")))
    key = refused(conformance(*RUN, "--api-key", os.fsdecode(b"sk-\xff\xfe-0123456789")))
    url = refused(conformance("run", "--base-url", os.fsdecode(b"http://127.0.0.1:9/caf\xe9/v1")))
    assert "the value of --header 'X-Team' is not valid UTF-8" in header
    assert "the API key is not valid UTF-8" in key and "the base URL" in url and "is not valid UTF-8" in url


def test_a_ca_bundle_that_is_not_pem_is_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n")
    err = refused(conformance("run", "--base-url", "https://127.0.0.1:9/v1", "--ca-bundle", str(bundle)))
    assert "holds no certificate TLS can load" in err


def test_fuzz_refuses_a_key_with_a_line_break_inside(tmp_path: Path) -> None:
    err = refused(conformance("fuzz", "--base-url", "http://127.0.0.1:9/v1", "--api-key", INSIDE,
                              "--report-dir", str(tmp_path)), tmp_path)
    assert "the API key has a line break" in err


def test_the_plugin_refuses_a_key_with_a_line_break_inside(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                           "conformance.suites", "--conformance-base-url", "http://127.0.0.1:9/v1",
                           "--conformance-report-dir", str(tmp_path)], capture_output=True, timeout=120, check=False,
                          env={**os.environ, "OPENAI_API_KEY": INSIDE}, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert b"the API key has a line break" in proc.stdout + proc.stderr
    assert not leaked(proc, tmp_path)


@pytest.mark.slow
def test_a_trailing_line_break_is_removed_said_and_never_written(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        proc = conformance("run", "--base-url", server.base_url, "--scenario", "stream-plain", "--scenario", "models",
                           "--report-dir", str(tmp_path), env={"OPENAI_API_KEY": KEY + "\n"})
        sent = {r.key for r in server.requests}
    err = proc.stderr.decode()
    assert proc.returncode in (0, 1), err
    assert "the API key ended with a line break" in err and "it was removed" in err
    assert sent == {f"Bearer {KEY}"}  # the key without its line break, on every request
    assert not leaked(proc, tmp_path)


ECHO = f"Illegal header value {('Bearer ' + KEY + chr(10)).encode()!r}"  # h11's message, the key as repr escapes it


def _crash(monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str]) -> int:
    def boom(*_: object) -> object:
        raise RuntimeError(ECHO)

    monkeypatch.setattr(cli, "_engine_run", boom)
    monkeypatch.setattr(sys, "argv", ["conformance", *argv])
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    return int(exited.value.code or 0)


def test_an_internal_error_of_a_run_masks_the_key_in_crash_txt_and_on_the_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code = _crash(monkeypatch, [*RUN, "--report-dir", str(tmp_path)], {"OPENAI_API_KEY": KEY + "\n"})
    out = capsys.readouterr()
    assert code == 4 and "internal error, please report it: RuntimeError: Illegal header value" in out.err
    crash = (tmp_path / "crash.txt").read_text(encoding="utf-8")
    assert "Traceback" in crash and "RuntimeError" in crash
    assert SECRET not in out.err + out.out + crash


def test_an_internal_error_of_any_command_masks_what_was_given(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.report import rulebook

    def boom() -> str:
        raise RuntimeError(ECHO)

    monkeypatch.setattr(rulebook, "text", boom)
    monkeypatch.setattr(sys, "argv", ["conformance", "rules"])
    monkeypatch.setenv("CONFORMANCE_API_KEY", KEY + "\n")
    with pytest.raises(SystemExit) as exited:
        cli.main()
    out = capsys.readouterr()
    crash = Path(out.err.rsplit("the traceback is in ", 1)[1].strip())
    assert exited.value.code == 4 and crash.name == "crash.txt"
    assert SECRET not in out.err + crash.read_text(encoding="utf-8")


@pytest.mark.parametrize("spelling", [KEY, KEY + "\n", repr(KEY + "\n"), repr((KEY + "\r\n").encode()),
                                      f"{KEY}\\n".replace("\\", "\\\\")])
def test_every_spelling_a_traceback_gives_is_masked(spelling: str) -> None:
    scrub = Scrubber([KEY + "\n"])
    assert SECRET not in scrub.text(f"value {spelling} here")


def test_given_secrets_finds_each_way_a_key_comes_in() -> None:
    argv = ["run", "--api-key", "flag-key-1", "--api-key=eq-key-2", "-H", "X-A: header-key-3", "-HX-B: glued-key-4"]
    found = cli.given_secrets(argv, {"OPENAI_API_KEY": "env-key-5\n", "CONFORMANCE_HEADERS": "X-C: line-key-6\nX-D: b7"})
    for value in ("flag-key-1", "eq-key-2", "header-key-3", "glued-key-4", "env-key-5", "line-key-6"):
        assert value in found


def test_the_action_masks_each_line_of_a_key_pasted_with_a_line_break(tmp_path: Path) -> None:
    out = tmp_path / "summary.md"
    proc = subprocess.run([sys.executable, "-m", "conformance.action"], capture_output=True, text=True, timeout=120,
                          check=False, cwd=tmp_path,
                          env={**os.environ, "CONFORMANCE_API_KEY": f"{KEY}\ntail-of-it", "GITHUB_STEP_SUMMARY": str(out),
                               "CONFORMANCE_BASE_URL": "http://127.0.0.1:9/v1", "CONFORMANCE_MODEL": "m"})
    lines = proc.stdout.splitlines()
    assert f"::add-mask::{KEY}" in lines and "::add-mask::tail-of-it" in lines
    assert proc.returncode == 2 and "the API key has a line break" in proc.stderr
