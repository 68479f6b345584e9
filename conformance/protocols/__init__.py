"""Protocols: what the payloads of a wire format mean. ``wire/`` decodes SSE and NDJSON with no
knowledge of payloads; each package here classifies and assembles one protocol's payloads.

- ``chat``: OpenAI Chat Completions over SSE (and its JSON body), ``[DONE]``, the assembler.
- ``ollama``: Ollama's NDJSON frames.

A new protocol (the Responses API's semantic events, say) is one package here, its rules (with
``protocol`` set), its scenarios and its fixtures; ``protocol_of`` names which one an endpoint speaks.
"""

from __future__ import annotations

PROTOCOLS = ("chat", "ollama")


def protocol_of(endpoint: str) -> str | None:
    """The protocol an endpoint speaks (None for the plain JSON routes: models, cancel, tags)."""
    if endpoint == "chat":
        return "chat"
    if endpoint in ("ollama-chat", "ollama-generate", "ollama-pull"):
        return "ollama"
    return None
