"""Chat Completions' capabilities: (name, the scenario that probes it, the rule --expect fails[, whether it is a
route]). The route first: a server of another protocol alone (the Responses API, an Anthropic-only proxy) does not
serve it, and then no chat scenario is sent."""

from __future__ import annotations

CAPABILITIES = (
    ("chat", "stream-plain", "TRN-020", True),  # POST /v1/chat/completions itself
    ("tools", "tools-auto", "TOOL-018"),  # seed 001 takes auto and none, and may refuse the rest
    ("reasoning", "reasoning", "RSN-008"),
    ("structured", "json-schema-strict", "STR-006"),
    ("usage", "stream-usage", "USG-011"),
    ("cancel-endpoint", "cancel-unknown", "CAN-006"),
    ("request-id", "request-id", "TRN-013"),
    ("images", "image-data-url", "IMG-003"),  # seed 001: only with a vision pack
)
