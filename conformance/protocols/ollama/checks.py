"""Ollama NDJSON: /api/chat and /api/generate frames, done and done_reason, terminal errors."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.checks.conditions import headers_known
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.model import Intent
from conformance.protocols.ollama.watch import FrameWatch


def _frames(a: Analysis) -> FrameWatch:
    """What the streaming judge kept of the body's lines (nothing, for a body that was not NDJSON or did not decode)."""
    return a.frames if a.frames is not None else FrameWatch(chat=a.exchange.endpoint == "ollama-chat")


def ollama_stream(a: Analysis) -> bool:
    """A successful answer on Ollama's generating routes (its rules run on its routes only: Rule.protocol)."""
    return a.exchange.endpoint in ("ollama-chat", "ollama-generate") and a.success


@check("OLL-001", "OLL-002", "OLL-003", "OLL-004", "OLL-005", "OLL-006", when=(ollama_stream,))
def frames(a: Analysis) -> Iterator[Finding]:
    if headers_known(a) and a.content_type != "application/x-ndjson":
        yield finding(a, "OLL-001", f"Content-Type {a.exchange.header('content-type')!r}", "application/x-ndjson")
    w = _frames(a)
    bad = w.bad
    if bad is not None or a.format != "ndjson":
        what = "no NDJSON" if bad is None else ("a line without LF" if bad.partial else f"line {bad.text!r}")
        yield finding(a, "OLL-002", what, "one JSON object per line, each ended by LF",
                      offset=bad.offset if bad else 0)
    end = w.first_terminal
    if end is None:
        yield finding(a, "OLL-003", "a stream with no done: true frame and no error frame",
                      "a final done: true frame (or an error frame)", offset=len(a.exchange.body) or None)
        return
    last = end.value
    if last.get("done") is True and last.get("done_reason") not in ("stop", "length"):
        yield finding(a, "OLL-004", f"done_reason {short(last.get('done_reason'))}", "stop or length",
                      offset=end.offset)
    options = a.request.get("options")
    cap = options.get("num_predict") if isinstance(options, dict) else None
    used = last.get("eval_count")
    if last.get("done") is True and last.get("done_reason") == "length" and isinstance(cap, int) \
            and isinstance(used, int) and 0 <= used < cap:  # seed 002: done_reason is stop for natural completion
        yield finding(a, "OLL-004", f"done_reason length after {used} of num_predict {cap} tokens",
                      "stop: the answer ended by itself before the cap", offset=end.offset)
    if w.after_terminal:
        yield finding(a, "OLL-005", f"{w.after_terminal} line(s) after the final frame", "nothing",
                      offset=w.after_first)
    if w.early is not None:
        yield finding(a, "OLL-006", f"a frame with done {short(w.early.value.get('done'))}", "done: false",
                      offset=w.early.offset)


@check("OLL-007", "OLL-008", when=(ollama_stream, lambda a: a.frames is not None and a.frames.lines > 0))
def frame_shapes(a: Analysis) -> Iterator[Finding]:
    w = _frames(a)
    if w.shape is not None:
        want = "message {role: assistant, content: str}" if w.chat else "response: str"
        yield finding(a, "OLL-007", f"frame {short(w.shape.value)}", want, offset=w.shape.offset)
    if len(w.models) > 1 or w.odd_model:
        more = f" and more (over {len(w.models)})" if w.more_models else ""
        yield finding(a, "OLL-008", f"models {sorted(w.models)}{more}", "one model name on every frame")


@check("OLL-009", when=(lambda a: a.exchange.endpoint == "ollama-tags" and a.success,))
def tags(a: Analysis) -> Iterator[Finding]:
    body = a.json_body
    models = body.get("models") if isinstance(body, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, dict) and isinstance(m.get("name"), str)
                                               for m in models):
        yield finding(a, "OLL-009", f"body {short(body)}", '{"models": [{"name": …}, …]}')


def _ollama(a: Analysis) -> bool:
    return a.exchange.endpoint in ("ollama-chat", "ollama-generate", "ollama-pull")


@check("OLL-011", when=(ollama_stream, lambda a: a.intent == Intent.EXPECT_LENGTH))
def cut_by_num_predict(a: Analysis) -> Iterator[Finding]:
    last = _frames(a).last_terminal
    if last is None:
        return  # OLL-003 reports the missing final frame
    if last.value.get("done") is True and last.value.get("done_reason") != "length":
        yield finding(a, "OLL-011", f"done_reason {short(last.value.get('done_reason'))} after num_predict "
                      f"{short((a.request.get('options') or {}).get('num_predict'))}", "length", offset=last.offset)


@check("OLL-012", when=(_ollama, headers_known, lambda a: bool(a.exchange.request_header("x-request-id")),
                        lambda a: a.exchange.status is not None))
def ollama_request_id(a: Analysis) -> Iterator[Finding]:
    sent, got = a.exchange.request_header("x-request-id"), a.exchange.header("x-request-id")
    if got != sent:
        yield finding(a, "OLL-012", f"X-Request-ID {short(got)}", f"{sent!r}, as sent (seed 002 headers)")


@check("OLL-013", when=(lambda a: a.exchange.endpoint == "ollama-pull" and a.success,))
def pull_frames(a: Analysis) -> Iterator[Finding]:
    if a.format == "json":  # stream: false, the final status only
        body = a.json_body
        if not isinstance(body, dict) or not (isinstance(body.get("status"), str) or "error" in body):
            yield finding(a, "OLL-013", f"body {short(body)}", '{"status": "success"} or {"error": ...}', offset=0)
        return
    w = _frames(a)
    if w.pull_problem is not None:
        what, mark = w.pull_problem
        want = "{status: str, ...} or an error frame" if what == "frame" else \
            "digest (str), total and completed (integers, completed <= total)"
        yield finding(a, "OLL-013", f"{what} {short(mark.value)}", want, offset=mark.offset)
        return
    last = w.last.value if w.last is not None else None
    if not isinstance(last, dict) or not (last.get("status") == "success" or "error" in last):
        yield finding(a, "OLL-013", f"last frame {short(last)}", '{"status": "success"} or an error frame',
                      offset=w.last.offset if w.last is not None else 0)


@check("OLL-014", when=(lambda a: a.intent == Intent.OLLAMA_FAILURE and a.exchange.status is not None,))
def ollama_failure(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status or 0
    if status >= 400:
        body = a.json_body
        if not isinstance(body, dict) or "error" not in body:
            yield finding(a, "OLL-014", f"{status} with body {short(a.exchange.body[:80])}", '{"error": "..."}', offset=0)
        return
    w = _frames(a)
    if w.failed and (w.done or "error" not in w.last_frame):
        yield finding(a, "OLL-014", f"status {status} ending {short(w.last_frame)}",
                      "an error status, or a terminal error frame and no done: true frame (seed 002)")


@check("OLL-015", when=(lambda a: a.intent == Intent.OLLAMA_FAILURE and a.exchange.status is not None,))
def ollama_unknown_model(a: Analysis) -> Iterator[Finding]:
    """An unknown model answered as if it were served: not a failure shape seed 002 names (OLL-014 judges those),
    but not what Ollama does (404 with {"error"})."""
    status = a.exchange.status or 0
    w = _frames(a)
    if status < 400 and not w.failed:
        yield finding(a, "OLL-015", f"status {status} for model {short(a.request.get('model'))}, answered "
                      f"({w.frames} frame(s), none an error)",
                      '404 {"error": "model ... not found"} as Ollama answers, or a terminal error frame')
