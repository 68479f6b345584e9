"""Say what is wrong (issue 57): a base URL whose model list answers 404, a redirect, a 5xx, an HTML page or JSON
that is no list is named as the URL's problem, in one sentence with what was expected, what came and a hint; the
model is blamed only when the refusal names it or the server lists models and not that one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from conformance.capabilities import ROUTE_CAPABILITIES
from tests.hostile.servers import HostileServer, Req, answer, send

HTML = b"<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>"


def html_everywhere(conn: socket.socket, req: Req, status: int = 404) -> None:
    send(conn, status, {"Content-Type": "text/html"}, HTML)


def redirect(conn: socket.socket, req: Req) -> None:
    if req.path.endswith("/models"):
        send(conn, 301, {"Location": "http://127.0.0.1:9/api/v1/models", "Content-Type": "text/html"}, HTML)
    else:
        html_everywhere(conn, req)


def model_list(body: bytes, status: int = 200, content_type: str = "application/json"):  # type: ignore[no-untyped-def]
    def behaviour(conn: socket.socket, req: Req) -> None:
        if req.path.endswith(("/models", "/api/tags")):
            send(conn, status, {"Content-Type": content_type}, body)
        else:
            html_everywhere(conn, req)
    return behaviour


def conformance(*argv: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith(("API_KEY", "_proxy", "_PROXY"))}
    return subprocess.run([sys.executable, "-m", "conformance", "run", *argv], capture_output=True, text=True,
                          timeout=120, check=False, env=clean)


CASES = [
    ("html-404", html_everywhere, ["answered 404 (an HTML page)", "where a JSON model list was expected",
                                  "is the API at http://127.0.0.1:"]),
    ("redirect", redirect, ["answered 301, a redirect to 'http://127.0.0.1:9/api/v1/models'",
                            "is the base URL http://127.0.0.1:9/api/v1? (the suite follows no redirect)"]),
    ("server-error", model_list(b'{"error": {"message": "upstream down"}}', 502),
     ["answered 502 (JSON: upstream down)"]),
    ("html-200", model_list(HTML, 200, "text/html"), ["answered 200 with an HTML page"]),
    ("text-200", model_list(b"hello", 200, "text/plain"), ["answered 200 with text/plain: hello"]),
    ("json-no-list", model_list(b'{"status": "ok"}'), ["answered 200 with JSON that is no model list"]),
]


@pytest.mark.parametrize(("behaviour", "says"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_model_list_that_is_none_names_the_url(tmp_path, behaviour, says) -> None:  # type: ignore[no-untyped-def]
    with HostileServer(behaviour) as server:
        proc = conformance("--base-url", server.base_url + "/v2/wrong/v1", "--report-dir", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("conformance:") == 1 and "Traceback" not in proc.stderr
    assert "the base URL does not look like an LLM API" in proc.stderr and "pass --model" not in proc.stderr
    for text in says:
        assert text in proc.stderr, proc.stderr


def test_with_model_and_no_route_served_the_url_is_named_not_the_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with HostileServer(html_everywhere) as server:
        proc = conformance("--base-url", server.base_url + "/v2/wrong", "--model", "m", "--report-dir", str(tmp_path))
        paths = {r.path for r in server.requests}
    assert proc.returncode == 2, proc.stderr
    said = proc.stderr.splitlines()[-1]
    assert said.startswith("conformance: nothing at http://") and "serves an LLM API" in said
    assert ("POST /v1/chat/completions, POST /api/chat, POST /v1/responses, POST /v1/messages, POST /v1/completions "
            "and GET /v1/models answered 404 (an HTML page)") in said
    assert "is not served" not in said and "check --model" not in said
    probes = len(ROUTE_CAPABILITIES)
    assert len([p for p in paths if not p.endswith(("/models", "/api/tags", "/health"))]) == probes  # one a route


def lists(ids: list[str] | None, refusal: bytes):  # type: ignore[no-untyped-def]
    """A server that lists ``ids`` (None: no model list, a 404) and refuses every POST with ``refusal`` (a 404)."""
    def behaviour(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/v1/models") and ids is not None:
            send(conn, 200, {"Content-Type": "application/json"},
                 json.dumps({"object": "list", "data": [{"id": i, "object": "model"} for i in ids]}).encode())
        elif req.method == "POST":
            send(conn, 404, {"Content-Type": "application/json"}, refusal)
        else:
            html_everywhere(conn, req)
    return behaviour


ROUTE = b'{"error": {"message": "Unknown route POST /v1/chat/completions"}}'
NAMED = b'{"error": {"message": "The model \'typo\' does not exist", "type": "invalid_request_error"}}'
CODED = b'{"error": {"message": "not found", "code": "model_not_found"}}'
GROUP = (b'{"error": {"message": "litellm.NotFoundError: NotFoundError: OpenAIException - Not Found\\n\\nLiteLLM: model '
         b'group \'typo\' failed with the error above. No fallback was attempted.", "code": "404"}}')


@pytest.mark.parametrize(("ids", "refusal", "blamed"), [
    (["served-model"], ROUTE, True),  # the server lists models, and not that one
    (None, NAMED, True),  # no list, and the refusal names the model
    (None, CODED, True),  # no list, and the refusal's code says model
    (None, ROUTE, False),  # no list, and the refusal is a route not found: the URL, never the model
    (["typo"], GROUP, False),  # listed, and a proxy's 404 names its model group: never the model (LiteLLM)
], ids=["unlisted", "named", "coded", "route", "listed-and-named"])
def test_the_model_is_blamed_only_when_listed_elsewhere_or_named(tmp_path, ids, refusal, blamed) -> None:  # type: ignore[no-untyped-def]
    with HostileServer(lists(ids, refusal)) as server:
        proc = conformance("--base-url", server.base_url, "--model", "typo", "--report-dir", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    said = proc.stderr.splitlines()[-1]
    if blamed:
        assert "the model 'typo' is not served" in said and "check --model" in said, said
        assert ("the server lists: 'served-model'" in said) == (ids == ["served-model"])
    else:
        assert "nothing at" in said and "is not served" not in said, said


def test_a_server_of_one_protocol_is_run_on_it_and_its_404s_are_routes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A server that serves chat and answers 404 with a JSON envelope on the other protocols' routes: no model is
    blamed, the other routes' scenarios are not sent, and the run is judged on chat."""
    def chat_only(conn: socket.socket, req: Req) -> None:
        if req.path.endswith(("/v1/responses", "/v1/messages", "/api/chat")):
            send(conn, 404, {"Content-Type": "application/json"}, b'{"error": {"message": "Not Found"}}')
        else:
            answer(conn, req)

    with HostileServer(chat_only) as server:
        proc = conformance("--base-url", server.base_url, "--model", "m", "--scenario", "stream-plain",
                           "--scenario", "responses-json", "--scenario", "messages-json", "--report-dir", str(tmp_path))
        posted = [r.path for r in server.requests if r.method == "POST"]
    assert proc.returncode in (0, 1), proc.stderr
    assert "routes served: chat; not served:" in proc.stdout
    others = sorted(p for p in posted if p != "/v1/chat/completions")
    assert others == ["/v1/messages", "/v1/responses"]  # each route's probe, and nothing more
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    unsent = {s["name"]: s["not_sent"] for s in doc["scenarios"] if s.get("not_sent")}
    assert set(unsent) == {"responses-json", "messages-json"}
    assert "the route is not served" in unsent["responses-json"]

