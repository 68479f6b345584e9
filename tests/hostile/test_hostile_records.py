"""A hostile server (endless stream, giant line, stalled socket) gets a finding, never a hang."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from conformance.checks import evaluate
from conformance.engine.client import Limits, Request, record
from conformance.exchange import analyze

HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"X-Accel-Buffering: no\r\nConnection: close\r\n\r\n")


def endless(conn: socket.socket) -> None:
    conn.sendall(HEAD)
    chunk = b'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,' \
            b'"delta":{"content":"la"},"finish_reason":null}]}\n\n'
    while True:  # a token every 5 ms, forever
        conn.sendall(chunk)
        time.sleep(0.005)


def giant_line(conn: socket.socket) -> None:
    conn.sendall(HEAD + b"data: ")
    while True:
        conn.sendall(b"x" * 65536)


def stalled(conn: socket.socket) -> None:
    conn.sendall(HEAD + b'data: {"choices":[]}\n\n')
    time.sleep(30)


@pytest.fixture
def hostile() -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    sockets: list[socket.socket] = []

    def serve(behaviour: Callable[[socket.socket], None]) -> str:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        sockets.append(listener)

        def accept() -> None:
            conn, _ = listener.accept()
            conn.recv(65536)
            try:
                behaviour(conn)
            except OSError:
                pass
            finally:
                conn.close()

        threading.Thread(target=accept, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    yield serve
    for listener in sockets:
        listener.close()


CASES = [
    ("endless-stream", endless, Limits(total=1.5, idle=2, first_byte=2), "total timeout",
     "TRN-010"),
    ("giant-line", giant_line, Limits(total=20, idle=5, first_byte=5, max_bytes=2 * 1024 * 1024), "byte cap",
     "TRN-011"),
    ("stalled-socket", stalled, Limits(total=20, idle=1, first_byte=1), "idle timeout", "TRN-010"),
]


@pytest.mark.parametrize(("behaviour", "limits", "aborted", "rule"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_server_gets_a_finding(hostile: Callable[[Callable[[socket.socket], None]], str],
                                       behaviour: Callable[[socket.socket], None], limits: Limits, aborted: str,
                                       rule: str) -> None:
    base = hostile(behaviour)
    start = time.monotonic()
    ex = record(base, Request(body={"model": "m", "messages": [], "stream": True}), limits)
    assert time.monotonic() - start < 10
    assert ex.observations.aborted == aborted
    failed = {v.rule.id for v in evaluate(analyze(ex)) if v.outcome == "failed"}
    assert rule in failed


def test_unreachable_port_is_recorded_not_raised() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ex = record(f"http://127.0.0.1:{port}", Request(method="GET", path="/v1/models"), Limits(connect=1))
    assert ex.status is None and ex.observations.aborted == "connect error"


def event_then_giant_line(conn: socket.socket) -> None:
    conn.sendall(HEAD + b'data: {"choices":[]}\n\n' + b"data: ")
    while True:
        conn.sendall(b"x" * 65536)


def event_then_long_lines(conn: socket.socket) -> None:
    conn.sendall(HEAD + b'data: {"choices":[]}\n\n')
    line = b"data: " + b"x" * (1024 * 1024) + b"\r\n\r\n"  # each line 1 MiB: the whole far past the line cap
    for _ in range(20):
        conn.sendall(line)
    conn.close()


@pytest.mark.parametrize(("behaviour", "aborted"), [(event_then_giant_line, "line cap"), (event_then_long_lines, None)],
                         ids=["giant-line", "long-lines"])
def test_the_line_cap_holds_after_the_answer_has_begun(hostile: Callable[[Callable[[socket.socket], None]], str],
                                                       behaviour: Callable[[socket.socket], None],
                                                       aborted: str | None) -> None:
    # a request with a refusal deadline (answer) decodes what it records until its first event; then the client
    # stops decoding (the judge decodes it) and only follows the length of the line not ended yet: a line past
    # 16 MiB still ends the exchange there, as when the client decoded it all, not at the byte cap
    ex = record(hostile(behaviour), Request(body={"model": "m", "messages": [], "stream": True}),
                Limits(total=20, idle=5, first_byte=5, answer=5, max_bytes=40 * 1024 * 1024))
    assert ex.observations.aborted == aborted
    assert len(ex.body) < (17 if aborted else 22) * 1024 * 1024
