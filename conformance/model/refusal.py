"""What a refusal says caused it: read before any rule blames the request's feature for it (issue 59).

A 4xx or 5xx whose message names its cause (the prompt beyond the context, a rate limit, the key, the body's size, an
overloaded server) is about that cause, not about the tool_result turn, the system blocks or the agent's request that
happened to carry the long prompt. ``cause`` reads the message from any protocol's error shape (OpenAI's
``{"error": {"message"}}``, Anthropic's ``{"type": "error", "error": {...}}``, FastAPI's ``detail``, Ollama's
``{"error": "..."}``, plain text) and names the cause, or None when the message names none.

The phrases are the servers' own, read in their sources: vLLM's serving layer ("This model's maximum context length
is N tokens", "is longer than the maximum model length"), llama.cpp's ``exceed_context_size_error`` ("exceeds the
available context size"), llama-cpp-python's errors.py, mlx-lm, Anthropic's "prompt is too long", OpenAI's
``context_length_exceeded``, and the list LiteLLM keeps to map every provider's context error
(litellm_core_utils/exception_mapping_utils.py, ``is_error_str_context_window_exceeded``).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

CONTEXT_CODES = frozenset({"context_length_exceeded", "context_window_exceeded", "exceed_context_size_error",
                           "model_context_window_exceeded", "string_above_max_length_context"})
CONTEXT_PHRASES = (
    "maximum context length", "context length is", "context window", "context_length_exceeded",
    "longer than the maximum model length", "maximum model length", "max_model_len", "exceeds the available context",
    "exceed context limit", "maximum context limit", "longer than the model's context length", "prompt is too long",
    "input tokens exceed", "exceeds the maximum number of tokens", "too many tokens", "context size", "n_ctx",
    "exceeds the context", "input is too long", "prompt too long", "tokens exceed",
)
RATE_PHRASES = ("rate limit", "rate_limit", "too many requests", "quota")
OVERLOAD_PHRASES = ("overloaded", "server is busy", "at capacity", "queue is full", "try again later")
SIZE_PHRASES = ("payload too large", "request entity too large", "body too large", "request too large",
                "exceeds the maximum body", "body size")
AUTH_PHRASES = ("api key", "api_key", "x-api-key", "unauthorized", "authentication", "invalid key", "not authorized")
CAUSES = ("context", "rate-limit", "overloaded", "size", "auth")
TITLE = {"context": "the prompt is beyond the server's context", "rate-limit": "a rate limit",
         "overloaded": "the server is overloaded", "size": "the body's size", "auth": "the key"}


class Cause(NamedTuple):
    """A refusal's cause, and the message that names it (clipped, as the server sent it)."""

    kind: str  # one of CAUSES
    message: str

    def reason(self) -> str:
        """The sentence a skipped verdict carries."""
        return f"not judged: refused for {TITLE[self.kind]} ({self.message[:200]}), not for this request's feature"


def message_of(body: bytes) -> tuple[str, str]:
    """(the error's code and type joined, its message) from any protocol's error shape; ("", the text) else."""
    text = body[:65536].decode("utf-8", "replace")
    try:
        doc: Any = json.loads(text)
    except ValueError:
        return "", text.strip()
    return message_of_doc(doc, text)


def message_of_doc(doc: Any, text: str = "") -> tuple[str, str]:
    """``message_of`` for a body already parsed (``text``: the body as text, for a shape with no message)."""
    if not isinstance(doc, dict):
        return "", text.strip()
    error = doc.get("error")
    if isinstance(error, dict):
        codes = " ".join(str(error.get(k)) for k in ("code", "type") if error.get(k) is not None)
        message = error.get("message")
        return codes, str(message) if message is not None else json.dumps(error)[:1000]
    if isinstance(error, str):
        return "", error
    detail = doc.get("detail") if "detail" in doc else doc.get("message")
    if detail is not None:
        return str(doc.get("code") or doc.get("type") or ""), detail if isinstance(detail, str) else json.dumps(detail)
    return "", text.strip()


def cause(status: int | None, body: bytes) -> Cause | None:
    """The cause a refusal names (its status, its code, its message), or None: a 2xx, no response, or a refusal whose
    message names no cause (then the rules judge it as it is)."""
    if status is None or status < 400:
        return None
    codes, message = message_of(body)
    text = f"{codes} {message}".lower()
    short = " ".join(message.split())[:300]
    if any(c in codes for c in CONTEXT_CODES) or any(p in text for p in CONTEXT_PHRASES):
        return Cause("context", short)
    if status == 429 or any(p in text for p in RATE_PHRASES):
        return Cause("rate-limit", short)
    if status in (503, 529) or "overloaded_error" in codes or any(p in text for p in OVERLOAD_PHRASES):
        return Cause("overloaded", short)
    if status == 413 or any(p in text for p in SIZE_PHRASES):
        return Cause("size", short)
    if status in (401, 403) or "authentication_error" in codes or "permission_error" in codes or \
            any(p in text for p in AUTH_PHRASES):
        return Cause("auth", short)
    return None
