"""Transport: headers, media types, incremental delivery, HTTP framing, limits."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.checks.conditions import chat_ok, chat_sse, headers_known
from conformance.checks.registry import Finding, check, finding
from conformance.exchange import Analysis
from conformance.model.limits import ABANDONED, ANSWER_DEADLINE, REFUSAL_DEADLINE, SIZE_ABORTS
from conformance.protocols import MAX_JUDGED_BYTES

ABORTS_TIME = ("first-byte timeout", "idle timeout", "total timeout", ANSWER_DEADLINE)
ABORTS_SIZE = SIZE_ABORTS


@check("TRN-001", when=(chat_ok, headers_known))
def stream_media_type(a: Analysis) -> Iterator[Finding]:
    if a.content_type != "text/event-stream":
        yield finding(a, "TRN-001", f"Content-Type {a.exchange.header('content-type')!r}",
                      "text/event-stream", remedy="Clients only parse SSE when the media type says so.")


@check("TRN-002", "TRN-009", when=(chat_ok,))
def non_stream_media_type(a: Analysis) -> Iterator[Finding]:
    if headers_known(a) and a.content_type != "application/json":
        yield finding(a, "TRN-002", f"Content-Type {a.exchange.header('content-type')!r}",
                      "application/json")
    if a.format == "sse" or (headers_known(a) and a.content_type == "text/event-stream"):
        yield finding(a, "TRN-009", "an event stream for a request without stream: true",
                      "one chat.completion JSON object", offset=0)


@check("TRN-003", "TRN-004", "TRN-005", "TRN-012", when=(chat_sse, headers_known))
def stream_headers(a: Analysis) -> Iterator[Finding]:
    cache = a.exchange.header("cache-control") or ""
    if "no-cache" not in cache.lower() and "no-store" not in cache.lower():
        yield finding(a, "TRN-003", f"Cache-Control {cache or None!r}", "no-cache")
    accel = a.exchange.header("x-accel-buffering")
    if (accel or "").strip().lower() != "no":
        yield finding(a, "TRN-004", f"X-Accel-Buffering {accel!r}", "no",
                      remedy="Without it nginx buffers the stream and clients see bursts.")
    encoding = (a.exchange.header("content-encoding") or "identity").strip().lower()
    if encoding != "identity":
        yield finding(a, "TRN-005", f"Content-Encoding {encoding!r}", "no compression of text/event-stream")
    ctype = (a.exchange.header("content-type") or "").lower()
    if "charset=" in ctype and "charset=utf-8" not in ctype.replace('"', ""):
        yield finding(a, "TRN-012", f"Content-Type {ctype!r}", "no charset, or charset=utf-8")


@check("TRN-006", when=(headers_known, lambda a: a.exchange.request_header("x-request-id") is not None,
                        lambda a: a.exchange.protocol is None or a.exchange.protocol.openai))  # OLL-012 for Ollama
def request_id_echo(a: Analysis) -> Iterator[Finding]:
    sent = a.exchange.request_header("x-request-id")
    got = a.exchange.header("x-request-id")
    if got != sent:
        yield finding(a, "TRN-006", f"X-Request-ID {got!r}", f"the request's X-Request-ID {sent!r}")


@check("TRN-017", when=(headers_known, lambda a: a.exchange.status is not None
                        and a.exchange.request_http_version == "HTTP/1.1"))
def response_version(a: Analysis) -> Iterator[Finding]:
    if a.exchange.http_version == "HTTP/1.0":
        yield finding(a, "TRN-017", "an HTTP/1.0 status line to an HTTP/1.1 request", "HTTP/1.1",
                      remedy="Python's http.server answers HTTP/1.0 unless protocol_version is set to HTTP/1.1.")


PACED_S = 1.0  # a stream generated over at least this long arrives in more than one read from a server that flushes


def _has_timing(a: Analysis) -> bool:
    """A stream whose generation is known to last (the clock scenario sized it from the server's own speed): one read
    of all its events is buffering. A short stream from a fast server can arrive in one read however it is written,
    so it shows nothing either way (issue 27: the verdict was luck)."""
    paced = a.exchange.observations.paced_s
    return chat_sse(a) and len(a.exchange.arrivals) > 0 and a.watch is not None and a.watch.events >= 8 \
        and paced is not None and paced >= PACED_S  # (no watch: an SSE answer on another protocol's route)


BACK_TO_BACK = 0.1  # events whose reads all came within this share of their generation time were written together


@check("TRN-007", when=(_has_timing,))
def incremental_delivery(a: Analysis) -> Iterator[Finding]:
    """A stream generated over ``paced_s`` (at least a second) whose events all arrived within a tenth of that was
    written at the end. Not "in one read": a buffered write larger than a socket read arrives in several reads
    back to back (142,851 bytes in three reads within 0.3 ms: the self-test's buffered-to-end, missed so)."""
    arrivals = a.exchange.arrivals
    first_end, last_end = a.watch.first_end, a.watch.last_end
    first_read = next((i for i, (_, total) in enumerate(arrivals) if total >= first_end), None)
    last_read = next((i for i, (_, total) in enumerate(arrivals) if total >= last_end), None)
    paced = a.exchange.observations.paced_s or 0.0
    if first_read is None or last_read is None:
        return
    span = arrivals[last_read][0] - arrivals[first_read][0]
    if span <= BACK_TO_BACK * paced:
        when = arrivals[last_read][0]
        reads = last_read - first_read + 1
        how = "in one read" if reads == 1 else f"in {reads} reads within {span * 1000:.1f} ms"
        yield finding(a, "TRN-007", f"all {a.watch.events} events {how} at {when:.3f}s, of a stream generated "
                      f"over about {paced:.1f}s", "events written as they are generated", event=0,
                      remedy="Flush each event; do not buffer the response (see also X-Accel-Buffering).")


@check("TRN-008", when=(headers_known, lambda a: a.exchange.request_http_version == "HTTP/1.0"))
def http10_framing(a: Analysis) -> Iterator[Finding]:
    te = a.exchange.header("transfer-encoding")
    if te is not None:
        yield finding(a, "TRN-008", f"Transfer-Encoding {te!r} to an HTTP/1.0 request",
                      "no Transfer-Encoding; a close-delimited or Content-Length body")


@check("TRN-018", when=(chat_ok, lambda a: a.exchange.observations.aborted is None
                        and a.exchange.observations.disconnected_after_events is None))
def empty_answer(a: Analysis) -> Iterator[Finding]:
    """A 200 with nothing in it passes no rule by default (no event, no JSON to judge): it is a finding of its own,
    as a missing response is (TRN-014)."""
    if a.format != "empty":
        return
    yield finding(a, "TRN-018", f"status {a.exchange.status} with a body of {len(a.exchange.body)} bytes "
                  f"({a.exchange.header('content-type') or 'no Content-Type'})", "an event stream or a JSON completion",
                  offset=0)


CUT_BY_SERVER = frozenset({"protocol error", "transport error"})  # the connection ended or broke mid-body


@check("TRN-021", when=(lambda a: a.exchange.status is not None,))
def whole_body(a: Analysis) -> Iterator[Finding]:
    """A status came, then the server closed (or broke) the connection before the body's end: the client sees an
    error where an answer was under way (a Messages stream cut mid-answer, a chat stream without [DONE] and with a
    truncated chunk). The suite's own stops are other aborts (timeouts, caps, a disconnect it made)."""
    obs = a.exchange.observations
    if obs.aborted in CUT_BY_SERVER:
        yield finding(a, "TRN-021", f"the connection ended after {len(a.exchange.body)} body bytes: {obs.aborted}"
                      + (f" ({obs.error})" if obs.error else ""), "the whole body, then the end of the message",
                      offset=len(a.exchange.body))


@check("TRN-022", when=(lambda a: any(name.lower().startswith("x-npu-proxy-") for name, _ in a.exchange.headers),))
def npu_proxy_headers(a: Analysis) -> Iterator[Finding]:
    """Seed 002's routing headers: X-NPU-Proxy-Device equals the execution device (kept for backward
    compatibility), and a fallback reason is given only, and always, when the request ran elsewhere than routed."""
    device, executed = a.exchange.header("x-npu-proxy-device"), a.exchange.header("x-npu-proxy-execution-device")
    routed, reason = a.exchange.header("x-npu-proxy-routed-device"), a.exchange.header("x-npu-proxy-fallback-reason")
    if device is not None and executed is not None and device.strip() != executed.strip():
        yield finding(a, "TRN-022", f"X-NPU-Proxy-Device {device!r}, X-NPU-Proxy-Execution-Device {executed!r}",
                      "the same device (X-NPU-Proxy-Device equals the execution device)")
    if routed is not None and executed is not None:
        moved = routed.strip() != executed.strip()
        if moved and reason is None:
            yield finding(a, "TRN-022", f"routed to {routed!r}, executed on {executed!r}, no fallback reason",
                          "X-NPU-Proxy-Fallback-Reason when the execution device differs from the routed one")
        elif not moved and reason is not None:
            yield finding(a, "TRN-022", f"X-NPU-Proxy-Fallback-Reason {reason!r} on a request executed where routed",
                          "a fallback reason only when the execution device differs from the routed one")


@check("TRN-014", when=(lambda a: not a.exchange.observations.headers_unknown,))
def answered(a: Analysis) -> Iterator[Finding]:
    obs = a.exchange.observations
    if a.exchange.status is None and obs.aborted not in (REFUSAL_DEADLINE, ABANDONED):  # ERR-017, ERR-018
        why = obs.aborted or "the connection ended"
        yield finding(a, "TRN-014", f"no HTTP response ({why}{': ' + obs.error if obs.error else ''})",
                      "a status line and headers, for bad input a 4xx", offset=0 if a.exchange.body else None)


@check("TRN-010", "TRN-011")
def limits(a: Analysis) -> Iterator[Finding]:
    aborted = a.exchange.observations.aborted
    if aborted in ABORTS_TIME:
        yield finding(a, "TRN-010", f"the response was abandoned: {aborted}",
                      "a complete response within the time limits", offset=len(a.exchange.body) or None)
    if a.judged_bytes is not None:
        yield finding(a, "TRN-011", f"a body of {len(a.exchange.body)} bytes, judged on its first {a.judged_bytes}",
                      f"a body within what the suite judges ({MAX_JUDGED_BYTES} bytes of a body no protocol "
                      "decodes)", offset=a.judged_bytes)
    if aborted in ABORTS_SIZE or a.wire_error is not None:
        what = aborted or (a.wire_error.message if a.wire_error else "")
        offset = a.wire_error.offset if a.wire_error else None
        yield finding(a, "TRN-011", f"the response was abandoned: {what}",
                      "a body within the byte and line caps", offset=offset)


SILENCE_LIMIT_S = 60.0  # TRN-019: nginx's proxy_read_timeout default


def silences(arrivals: tuple[tuple[float, int], ...]) -> tuple[float, float]:
    """(seconds to the first byte, the longest silence after it) of a response's recorded reads."""
    if not arrivals:
        return 0.0, 0.0
    first = arrivals[0][0]
    gaps = [b[0] - a[0] for a, b in zip(arrivals, arrivals[1:], strict=False)]
    return first, max(gaps, default=0.0)


@check("TRN-019", when=(lambda a: a.format == "sse" and bool(a.exchange.arrivals),))
def silence(a: Analysis) -> Iterator[Finding]:
    first, between = silences(a.exchange.arrivals)
    if max(first, between) >= SILENCE_LIMIT_S:
        where = "before the first byte" if first >= between else "between two reads"
        yield finding(a, "TRN-019", f"a silence of {max(first, between):.1f} s {where} (first byte after "
                      f"{first:.1f} s, the longest gap after it {between:.1f} s)",
                      f"a byte at least every {SILENCE_LIMIT_S:.0f} s (an event, a ping, or an SSE comment)",
                      remedy="send a keep-alive (an SSE comment line, or the protocol's ping) while the model thinks")


@check("AGT-001", when=(lambda a: a.exchange.scenario.startswith("agent-") and a.exchange.status is not None,))
def agent_request(a: Analysis) -> Iterator[Finding]:
    from conformance.scenarios.agents import by_scenario, refused_field
    from conformance.wire.body import whole
    from conformance.wire.untrusted import one_line

    status = a.exchange.status or 0
    if status < 400:
        return
    entry = by_scenario(a.exchange.scenario)
    doc = a.json_body
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict) and error.get("message") is not None:
        message = str(error["message"])
    elif isinstance(doc, dict) and (error or doc.get("detail")):
        message = str(error or doc.get("detail"))
    else:
        message = whole(a.exchange.body)[:4096].decode("utf-8", "replace")
    field = refused_field(message, a.exchange.request)
    who = f"{entry.agent} {entry.version}'s {entry.turn} request" if entry else "the agent's request"
    yield finding(a, "AGT-001", f"{who} refused with {status}" + (f", naming {one_line(field)}" if field else "")
                  + f": {one_line(message[:300])}", "an answer (the agent sends this request as recorded)", offset=0)
