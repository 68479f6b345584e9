"""A gate that cannot go green by mistake (issue 26, item 1): a wrong --model, a selection that judges nothing,
an earlier run's reports, capabilities a selection never probed, a client that cannot start."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from tests.hostile.servers import HostileServer, Req, answer, chunk, send, sse_head


def conformance(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, timeout=300,
                          check=False)


def serves_only_m(conn: socket.socket, req: Req) -> None:
    """An honest server of one model, "m"; any other model is 404 model_not_found, as OpenAI answers it."""
    body = req.json()
    if body is not None and body.get("model") not in (None, "m"):
        send(conn, 404, {"Content-Type": "application/json"}, json.dumps({"error": {
            "message": f"The model `{body['model']}` does not exist", "type": "invalid_request_error",
            "code": "model_not_found"}}).encode())
        return
    answer(conn, req)


def test_a_wrong_model_is_one_sentence_and_exit_2_before_the_scenarios(tmp_path: Path) -> None:
    with HostileServer(serves_only_m) as server:
        full = conformance("run", "--base-url", server.base_url, "--model", "gpt-typo", "--timeout", "5",
                           "--report-dir", str(tmp_path / "a"))
        picked = conformance("run", "--base-url", server.base_url, "--model", "gpt-typo", "--timeout", "5",
                             "--scenario", "stream-plain", "--report-dir", str(tmp_path / "b"))
        targets = list(server.targets)
    for proc in (full, picked):
        assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "the model 'gpt-typo' is not served: stream-plain (POST /v1/chat/completions) answered 404" in proc.stderr
        assert "the server lists: 'm'" in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1
    assert len([t for t in targets if "chat/completions" in t]) == 2  # one request each, then the run ended
    assert not (tmp_path / "a" / "results.json").exists()


def test_a_model_the_list_omits_but_the_server_serves_runs(tmp_path: Path) -> None:
    with HostileServer(answer) as server:  # lists "m", answers any model
        proc = conformance("run", "--base-url", server.base_url, "--model", "served-unlisted", "--timeout", "5",
                           "--scenario", "stream-plain", "--report-dir", str(tmp_path))
    assert proc.returncode in (0, 1) and (tmp_path / "results.json").is_file(), proc.stderr[-2000:]


def test_a_selection_that_judges_nothing_is_exit_2(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", "--timeout", "5",
                           "--scenario", "stream-plain", "--rule", "CAN-001", "--report-dir", str(tmp_path))
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert "nothing selected: the chosen rules and scenarios judged no rule (CAN-001" in proc.stderr
    assert not (tmp_path / "results.json").exists()


def test_an_earlier_runs_reports_are_removed_when_a_run_ends_early(tmp_path: Path) -> None:
    for name in ("results.json", "junit.xml", "report.md", "report.html"):
        (tmp_path / name).write_text("an earlier run's verdict: pass", encoding="utf-8")
    (tmp_path / "wire").mkdir()
    (tmp_path / "wire" / "run.json").write_text("{}", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("the user's own file", encoding="utf-8")
    with HostileServer(serves_only_m) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "typo", "--timeout", "5",
                           "--report-dir", str(tmp_path))
    assert proc.returncode == 2
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["notes.txt"]


def test_capabilities_a_selection_never_probed_are_not_probed(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", "--timeout", "5",
                           "--scenario", "stream-plain", "--report-dir", str(tmp_path))
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "tools not probed," in proc.stdout and "tools no," not in proc.stdout
    caps = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["target"]["capabilities"]
    assert caps["tools"]["source"] == "not probed" and caps["request-id"]["source"] == "probed"
    assert "| tools | not probed |" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_a_client_that_cannot_start_is_one_sentence(tmp_path: Path) -> None:
    client = tmp_path / "client.py"
    client.write_text("import not_a_module_anywhere\n", encoding="utf-8")
    proc = conformance("fuzz-client", "--chunking", "whole", "--", sys.executable, str(client))
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert "the client command cannot start: ModuleNotFoundError: No module named 'not_a_module_anywhere'" in proc.stderr
    assert "runs assembled" not in proc.stdout


def test_no_color_means_no_escape_sequence(tmp_path: Path) -> None:
    import os

    with HostileServer(answer) as server:
        argv = ["run", "--base-url", server.base_url, "--model", "m", "--scenario", "stream-plain", "--report-dir"]
        plain = subprocess.run([sys.executable, "-m", "conformance", *argv, str(tmp_path / "a")], capture_output=True,
                               text=True, timeout=300, check=False, env={**os.environ, "FORCE_COLOR": "1", "NO_COLOR": "1"})
        styled = subprocess.run([sys.executable, "-m", "conformance", *argv, str(tmp_path / "b")], capture_output=True,
                                text=True, timeout=300, check=False, env={**os.environ, "FORCE_COLOR": "1"})
    assert "\x1b[" in styled.stdout  # forced colour is styled: the check below can fail
    assert plain.returncode == styled.returncode and "\x1b" not in plain.stdout + plain.stderr


def test_junit_testcases_carry_their_scenarios_time(tmp_path: Path) -> None:
    from xml.etree import ElementTree as ET

    with HostileServer(answer) as server:
        conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "stream-plain",
                    "--scenario", "non-stream", "--report-dir", str(tmp_path))
    cases = list(ET.parse(tmp_path / "junit.xml").getroot().iter("testcase"))
    assert cases and all(c.get("time") is not None for c in cases)
    elapsed = {s["name"]: s["elapsed_s"] for s in json.loads((tmp_path / "results.json").read_text())["scenarios"]}
    first = next(c for c in cases if "[stream-plain]" in str(c.get("name")))
    assert float(first.get("time") or -1) == round(elapsed["stream-plain"], 3)


def no_done(conn: socket.socket, req: Req) -> None:
    """Honest, but its streams end without data: [DONE] (a must failure, SSE-002)."""
    body = req.json()
    if req.path.endswith("/chat/completions") and body is not None and body.get("stream") is True:
        conn.sendall(sse_head() + chunk({"role": "assistant", "content": "Hi"}) + chunk({}, "stop"))
        return
    answer(conn, req)


def test_a_baseline_run_says_what_it_tolerated(tmp_path: Path) -> None:
    with HostileServer(no_done) as server:
        first = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "stream-plain",
                            "--report-dir", str(tmp_path / "a"))
        known = tmp_path / "known.json"
        known.write_text(conformance("baseline", str(tmp_path / "a" / "results.json")).stdout, encoding="utf-8")
        again = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "stream-plain",
                            "--baseline", str(known), "--report-dir", str(tmp_path / "b"))
    failing = json.loads(known.read_text(encoding="utf-8"))["known_failures"]
    assert first.returncode == 1 and failing, first.stdout[-2000:]
    assert again.returncode == 0, again.stdout[-2000:]
    assert f"baseline: {len(failing)} known failure(s) tolerated" in again.stdout


def test_a_terminal_gets_a_progress_bar_and_a_log_does_not(tmp_path: Path) -> None:
    import os
    import pty

    argv = [sys.executable, "-m", "conformance", "run", "--model", "m", "--scenario", "stream-plain", "--scenario",
            "non-stream"]
    with HostileServer(answer) as server:
        master, child = pty.openpty()
        proc = subprocess.Popen([*argv, "--base-url", server.base_url, "--report-dir", str(tmp_path / "a")],
                                stdout=child, stderr=child, env={**os.environ, "TERM": "xterm", "COLUMNS": "120"})
        os.close(child)
        shown = b""
        while True:
            try:
                piece = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not piece:
                break
            shown += piece
        os.close(master)
        assert proc.wait(timeout=120) in (0, 1)
        logged = conformance(*argv[3:], "--base-url", server.base_url, "--report-dir", str(tmp_path / "b"))
    text = shown.decode("utf-8", "replace")
    assert "━" in text and "scenarios" in text and "/3" in text, text[-2000:]  # rich's bar: done of total
    assert "━" not in logged.stdout and "\x1b" not in logged.stdout
