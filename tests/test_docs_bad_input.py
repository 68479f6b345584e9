"""The docs' "when something is wrong" table (conformance.docsite.BAD_INPUT) says what the suite says: each row is run
here, against a server that answers as the row describes, and its sentence must be the one printed (one line, no
traceback, exit 2; 3 where nothing answers)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.docsite import BAD_INPUT
from tests.hostile.servers import HostileServer, Req, send

HTML = b"<!DOCTYPE html><html><body>It works!</body></html>"
HOST = "http://host:8080"


def html(status: int) -> Callable[[socket.socket, Req], None]:
    def behaviour(conn: socket.socket, req: Req) -> None:
        send(conn, status, {"Content-Type": "text/html"}, HTML)
    return behaviour


def redirect(conn: socket.socket, req: Req) -> None:
    send(conn, 301, {"Location": "/api/v1/models", "Content-Type": "text/html"}, HTML)


def upstream_down(conn: socket.socket, req: Req) -> None:
    send(conn, 502, {"Content-Type": "application/json"}, b'{"error": {"message": "upstream down"}}')


def lists_m(conn: socket.socket, req: Req) -> None:
    if req.path.endswith("/v1/models"):
        send(conn, 200, {"Content-Type": "application/json"}, b'{"object": "list", "data": [{"id": "m"}]}')
    else:
        send(conn, 404, {"Content-Type": "application/json"}, b'{"error": {"message": "no such model"}}')


def refuses_keys(conn: socket.socket, req: Req) -> None:
    send(conn, 401, {"Content-Type": "application/json"}, b'{"error": {"message": "invalid key"}}')


SERVERS: dict[str, Callable[[socket.socket, Req], None]] = {
    "a base path that answers 404 (the wrong path)": html(404),
    "a base URL whose model list redirects": redirect,
    "a base URL that serves a web page": html(200),
    "a base URL whose model list fails (5xx)": upstream_down,
    "nothing served at all, with --model": html(404),
    "a model the server does not list": lists_m,
    "a key the server refuses": refuses_keys,
}


def test_every_row_is_run() -> None:
    assert len(BAD_INPUT) >= 14 and len({what for what, _, _ in BAD_INPUT}) == len(BAD_INPUT)


@pytest.mark.parametrize(("what", "example", "said"), BAD_INPUT, ids=[row[0] for row in BAD_INPUT])
def test_the_row_says_what_the_suite_says(tmp_path: Path, what: str, example: str, said: str) -> None:
    (tmp_path / "notes.txt").write_text("not a certificate\n")
    behaviour = SERVERS.get(what)
    server = HostileServer(behaviour) if behaviour is not None else None
    try:
        base = server.base_url if server is not None else HOST
        # the example as a shell reads it (quotes, $(...)), each argument NUL-terminated
        words = subprocess.run(["bash", "-c", f"set -- {example.replace(HOST, base)}; printf '%s\\0' \"$@\""],
                               capture_output=True, text=True, check=True).stdout
        argv = words.split("\0")[:-1]
        if "--base-url" not in argv:
            argv += ["--base-url", base]
        proc = subprocess.run([sys.executable, "-m", "conformance", "run", *argv, "--report-dir", str(tmp_path / "r")],
                              capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
                              env={k: v for k, v in os.environ.items() if not k.endswith(("API_KEY", "_PROXY", "_proxy"))})
    finally:
        if server is not None:
            server.close()
    assert proc.returncode == (3 if "exit 3" in what else 2), proc.stdout[-1000:] + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("conformance:") == 1, proc.stderr
    assert said.replace(HOST, base) in proc.stderr, proc.stderr
