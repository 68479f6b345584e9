"""Preconditions for checks: whether an exchange can show a rule at all."""

from __future__ import annotations

from typing import Any, TypeVar

from conformance.exchange import Analysis
from conformance.model import BAD_INPUT

T = TypeVar("T")


def chat_ok(a: Analysis) -> bool:
    """A successful answer of a protocol (chat, responses, ...) to a valid request: which protocols a rule judges
    is the rule's ``protocol`` (the registry decides), so the same precondition serves every SSE protocol."""
    return a.protocol is not None and a.success and a.intent not in BAD_INPUT


def chat_sse(a: Analysis) -> bool:
    """A successful answer that came back as an event stream."""
    return chat_ok(a) and a.format == "sse"


def chat_json(a: Analysis) -> bool:
    """A successful non-stream chat completion with a JSON body."""
    return chat_ok(a) and a.format == "json" and isinstance(a.json_body, dict)


def chat_answer(a: Analysis) -> bool:
    """A successful chat completion, streamed or not, that was decoded."""
    return chat_sse(a) or chat_json(a)


def bad_input(a: Analysis) -> bool:
    return a.intent in BAD_INPUT


def openai_route(a: Analysis) -> bool:
    """A route of OpenAI's API: a protocol that is one, or a plain OpenAI route (the cancel endpoint and /health have
    shapes of their own)."""
    protocol = a.exchange.protocol
    return protocol.openai if protocol is not None else a.exchange.endpoint in ("models", "model", "other")


def openai_error_response(a: Analysis) -> bool:
    """An error status on an OpenAI route."""
    status = a.exchange.status
    return status is not None and status >= 400 and openai_route(a)


def no_stream_error(a: Analysis) -> bool:
    """No error payload in the stream (chat's watch counts them; another protocol's payloads are kept)."""
    if hasattr(a.watch, "error_count"):
        return not a.watch.error_count
    return not any(p.kind == "error" for p in a.payloads)


def tool_calls(a: Analysis) -> bool:
    return chat_answer(a) and any(c.tool_calls for c in a.assembled.choices.values())


def offered_tools(a: Analysis) -> bool:
    return chat_answer(a) and bool(a.request.get("tools"))


def response_format(a: Analysis) -> str | None:
    fmt = a.request.get("response_format")
    if isinstance(fmt, dict) and isinstance(fmt.get("type"), str):
        return str(fmt["type"])
    return None


def structured(a: Analysis) -> bool:
    return chat_answer(a) and response_format(a) in ("json_object", "json_schema")


def max_tokens(a: Analysis) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = a.request.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def usage_of(a: Analysis) -> dict[str, Any] | None:
    usage = a.assembled.usage
    return usage if isinstance(usage, dict) else None


def wants_usage(a: Analysis) -> bool:
    opts = a.request.get("stream_options")
    return isinstance(opts, dict) and opts.get("include_usage") is True


def requested_n(a: Analysis) -> int:
    n = a.request.get("n", 1)
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1


def complete(a: Analysis) -> bool:
    """The client read the response to its end (it did not disconnect or give up)."""
    obs = a.exchange.observations
    return (obs.disconnect is None and obs.aborted is None and obs.disconnected_after_events is None
            and a.judged_bytes is None)


def headers_known(a: Analysis) -> bool:
    """The response headers were recorded (an offline capture may have only the body)."""
    return not a.exchange.observations.headers_unknown
