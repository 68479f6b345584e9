"""What every adapter shares (stdlib only; each adapter runs by path, so this folder is on its sys.path)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def blank(client: str, dist: str = "") -> dict[str, Any]:
    """What an adapter prints before it has assembled anything; ``client`` names the library and its version."""
    if dist:
        try:
            from importlib.metadata import version

            client = f"{dist} {version(dist)}"
        except Exception:  # noqa: BLE001 - the name alone then
            pass
    return {"content": "", "reasoning": "", "tool_calls": [], "finish_reason": None, "usage": None, "error": None,
            "complete": False, "client": client}


def recorded(i: int) -> dict[str, Any]:
    """The request the scenario sent for the ``i``-th exchange replayed (CONFORMANCE_REPLAY_REQUESTS, a JSON file of
    one request body per exchange): the adapter sends its tools, tool choice and options, so that the client's own
    checks run on them (a client that refuses a tool call under tool_choice none does so only when it sent none)."""
    path = os.environ.get("CONFORMANCE_REPLAY_REQUESTS")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            requests = json.load(handle)
    except (OSError, ValueError):
        return {}
    request = requests[i] if isinstance(requests, list) and i < len(requests) else None
    return request if isinstance(request, dict) else {}


# what a chat adapter sends of the recorded request beside its own model and messages
CHAT_OPTIONS = ("tools", "tool_choice", "parallel_tool_calls", "max_tokens", "max_completion_tokens", "stop",
                "response_format")


def chat_options(request: dict[str, Any]) -> dict[str, Any]:
    """The recorded chat request's tools, tool choice and options, as keyword arguments: function tools only (a
    client may refuse another kind before it sends anything, and the replay answers the exchanges in turn, one
    request each), and no tool choice without them."""
    out = {k: request[k] for k in CHAT_OPTIONS if request.get(k) is not None}
    tools = [t for t in out.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
    if tools:
        out["tools"] = tools
    else:
        out.pop("tools", None)
        out.pop("tool_choice", None)
        out.pop("parallel_tool_calls", None)
    return out


def failed(out: dict[str, Any], exc: BaseException) -> None:
    """What the client raised: the user's error (the exception's type and message)."""
    out["error"] = {"message": f"{type(exc).__name__}: {exc}"[:300]}


@contextmanager
def reading(out: dict[str, Any], *, ending_completes: bool = True) -> Iterator[dict[str, Any]]:
    """The client at work: what it raises is its user's error (``failed``); ending without raising is, for a client
    that tells its user nothing more (``ending_completes``), a complete answer."""
    try:
        yield out
    except Exception as exc:  # noqa: BLE001 - what the client made of the stream is the result
        failed(out, exc)
    else:
        if ending_completes:
            out["complete"] = True


def add_choice(out: dict[str, Any], calls: dict[int, dict[str, Any]], choice: Any,
               reasoning: Callable[[Any], str | None]) -> None:
    """A chat chunk's choice added to what the user has, as the SDK's documentation assembles deltas: the content,
    the reasoning (where ``reasoning`` finds it on a delta, as the client's users read it), the tool-call pieces, the
    finish."""
    delta = choice.delta
    if delta is not None:
        out["content"] += delta.content or ""
        out["reasoning"] += reasoning(delta) or ""
        add_call_pieces(calls, getattr(delta, "tool_calls", None))
    if choice.finish_reason is not None:
        out["finish_reason"] = choice.finish_reason


def add_call_pieces(calls: dict[int, dict[str, Any]], pieces: Any) -> None:
    """A delta's tool-call pieces added to the calls by index, as the OpenAI SDK's documentation assembles them
    (the id of the first piece that has one, the name and arguments joined)."""
    for piece in pieces or []:
        call = calls.setdefault(piece.index or 0, {"id": None, "name": "", "arguments": ""})
        call["id"] = call["id"] or piece.id
        if piece.function is not None:
            call["name"] += piece.function.name or ""
            call["arguments"] += piece.function.arguments or ""


def serve(one: Callable[[int], dict[str, Any]]) -> None:
    """CONFORMANCE_REPLAY_COUNT requests, one after another (the replay server serves its exchanges in turn), each
    printed as one JSON line as it ends; ``one`` gets the request's number."""
    for i in range(int(os.environ.get("CONFORMANCE_REPLAY_COUNT", "1"))):
        print(json.dumps(one(i)), flush=True)
