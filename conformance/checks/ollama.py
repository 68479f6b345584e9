"""Ollama NDJSON: /api/chat and /api/generate frames, done and done_reason, terminal errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.checks import Finding, check, finding, short
from conformance.checks.conditions import headers_known
from conformance.exchange import Analysis
from conformance.model import Intent


def _terminal(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("done") is True or "error" in value)


def ollama_stream(a: Analysis) -> bool:
    """A successful answer on Ollama's generating routes (its rules run on its routes only: Rule.protocol)."""
    return a.exchange.endpoint in ("ollama-chat", "ollama-generate") and a.success


@check("OLL-001", "OLL-002", "OLL-003", "OLL-004", "OLL-005", "OLL-006", when=(ollama_stream,))
def frames(a: Analysis) -> Iterator[Finding]:
    if headers_known(a) and a.content_type != "application/x-ndjson":
        yield finding(a, "OLL-001", f"Content-Type {a.exchange.header('content-type')!r}", "application/x-ndjson")
    lines = a.lines
    bad = next((ln for ln in lines if not isinstance(ln.value, dict) or ln.partial), None)
    if bad is not None or a.format != "ndjson":
        what = "no NDJSON" if bad is None else ("a line without LF" if bad.partial else f"line {bad.text[:60]!r}")
        yield finding(a, "OLL-002", what, "one JSON object per line, each ended by LF",
                      offset=bad.offset if bad else 0)
    end = next((i for i, ln in enumerate(lines) if _terminal(ln.value)), None)
    if end is None:
        yield finding(a, "OLL-003", "a stream with no done: true frame and no error frame",
                      "a final done: true frame (or an error frame)", offset=len(a.exchange.body) or None)
        return
    last = lines[end].value
    if last.get("done") is True and last.get("done_reason") not in ("stop", "length"):
        yield finding(a, "OLL-004", f"done_reason {short(last.get('done_reason'))}", "stop or length",
                      offset=lines[end].offset)
    options = a.request.get("options")
    cap = options.get("num_predict") if isinstance(options, dict) else None
    used = last.get("eval_count")
    if last.get("done") is True and last.get("done_reason") == "length" and isinstance(cap, int) \
            and isinstance(used, int) and 0 <= used < cap:  # seed 002: done_reason is stop for natural completion
        yield finding(a, "OLL-004", f"done_reason length after {used} of num_predict {cap} tokens",
                      "stop: the answer ended by itself before the cap", offset=lines[end].offset)
    if end != len(lines) - 1:
        yield finding(a, "OLL-005", f"{len(lines) - 1 - end} line(s) after the final frame", "nothing",
                      offset=lines[end + 1].offset)
    early = next((ln for ln in lines[:end] if isinstance(ln.value, dict) and ln.value.get("done") is not False),
                 None)
    if early is not None:
        yield finding(a, "OLL-006", f"a frame with done {short(early.value.get('done'))}", "done: false",
                      offset=early.offset)


@check("OLL-007", "OLL-008", when=(ollama_stream, lambda a: bool(a.lines)))
def frame_shapes(a: Analysis) -> Iterator[Finding]:
    chat = a.exchange.endpoint == "ollama-chat"
    models: set[Any] = set()
    for line in a.lines:
        frame = line.value
        if not isinstance(frame, dict) or "error" in frame:
            continue
        models.add(frame.get("model"))
        if chat:
            message = frame.get("message")
            ok = isinstance(message, dict) and message.get("role") == "assistant" \
                and isinstance(message.get("content"), str)
        else:
            ok = isinstance(frame.get("response"), str)
        if not ok:
            want = "message {role: assistant, content: str}" if chat else "response: str"
            yield finding(a, "OLL-007", f"frame {short(frame)}", want, offset=line.offset)
            break
    if len(models) > 1 or any(not isinstance(m, str) or not m for m in models):
        yield finding(a, "OLL-008", f"models {sorted(map(str, models))}", "one model name on every frame")


@check("OLL-009", when=(lambda a: a.exchange.endpoint == "ollama-tags" and a.success,))
def tags(a: Analysis) -> Iterator[Finding]:
    body = a.json_body
    models = body.get("models") if isinstance(body, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, dict) and isinstance(m.get("name"), str)
                                               for m in models):
        yield finding(a, "OLL-009", f"body {short(body)}", '{"models": [{"name": …}, …]}')


def _ollama(a: Analysis) -> bool:
    return a.exchange.endpoint in ("ollama-chat", "ollama-generate", "ollama-pull")


@check("OLL-011", when=(ollama_stream, lambda a: a.exchange.intent == Intent.EXPECT_LENGTH))
def cut_by_num_predict(a: Analysis) -> Iterator[Finding]:
    last = next((ln for ln in reversed(a.lines) if _terminal(ln.value)), None)
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
    lines = a.lines
    for ln in lines:
        frame = ln.value
        if not isinstance(frame, dict) or not (isinstance(frame.get("status"), str) or "error" in frame):
            yield finding(a, "OLL-013", f"frame {short(frame)}", "{status: str, ...} or an error frame",
                          offset=ln.offset)
            return
        if "digest" in frame:
            total, done = frame.get("total"), frame.get("completed", 0)
            if not isinstance(frame["digest"], str) or not isinstance(total, int) or not isinstance(done, int) \
                    or isinstance(total, bool) or not 0 <= done <= total:
                yield finding(a, "OLL-013", f"progress frame {short(frame)}",
                              "digest (str), total and completed (integers, completed <= total)", offset=ln.offset)
                return
    last = lines[-1].value if lines else None
    if not isinstance(last, dict) or not (last.get("status") == "success" or "error" in last):
        yield finding(a, "OLL-013", f"last frame {short(last)}", '{"status": "success"} or an error frame',
                      offset=lines[-1].offset if lines else 0)


@check("OLL-014", when=(lambda a: a.exchange.intent == Intent.OLLAMA_FAILURE and a.exchange.status is not None,))
def ollama_failure(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status or 0
    if status >= 400:
        body = a.json_body
        if not isinstance(body, dict) or "error" not in body:
            yield finding(a, "OLL-014", f"{status} with body {short(a.exchange.body[:80])}", '{"error": "..."}', offset=0)
        return
    frames = [ln.value for ln in a.lines if isinstance(ln.value, dict)]
    failed = any("error" in f for f in frames)
    if failed and (any(f.get("done") is True for f in frames) or "error" not in frames[-1]):
        yield finding(a, "OLL-014", f"status {status} ending {short(frames[-1] if frames else None)}",
                      "an error status, or a terminal error frame and no done: true frame (seed 002)")


@check("OLL-015", when=(lambda a: a.exchange.intent == Intent.OLLAMA_FAILURE and a.exchange.status is not None,))
def ollama_unknown_model(a: Analysis) -> Iterator[Finding]:
    """An unknown model answered as if it were served: not a failure shape seed 002 names (OLL-014 judges those),
    but not what Ollama does (404 with {"error"})."""
    status = a.exchange.status or 0
    frames = [ln.value for ln in a.lines if isinstance(ln.value, dict)]
    if status < 400 and not any("error" in f for f in frames):
        yield finding(a, "OLL-015", f"status {status} for model {short(a.request.get('model'))}, answered "
                      f"({len(frames)} frame(s), none an error)",
                      '404 {"error": "model ... not found"} as Ollama answers, or a terminal error frame')
