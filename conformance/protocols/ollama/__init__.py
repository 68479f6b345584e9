"""Ollama's native protocol: NDJSON frames on /api/chat and /api/generate (../shared/seeds/002 §2)."""

from __future__ import annotations

from conformance.protocols.ollama.assembler import assemble_frames

NAME = "ollama"

__all__ = ["NAME", "assemble_frames"]
