"""Ollama's capabilities: (name, the scenario that probes it, the rule --expect fails[, whether it is a route])."""

from __future__ import annotations

CAPABILITIES = (
    ("ollama", "ollama-chat", "OLL-010", True),  # seed 002 names /api/chat, /api/generate, /api/pull
)
