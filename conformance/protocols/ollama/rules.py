"""Ollama's rules: rows of (id, level, applies, title, source, *refs); their category is ``ollama``.

Sources: seed 002 (npu_proxy STREAMING.md, its Ollama NDJSON sections) and Ollama's API reference."""

from __future__ import annotations

NPU = "002_018dc7b61835a212.txt"  # seed 002 (npu_proxy STREAMING.md), cited by its sections

RULES: tuple[tuple[str, ...], ...] = (
    ("OLL-001", "should", "stream", "An Ollama stream is served as application/x-ndjson", f"{NPU} §2", "L1"),
    ("OLL-002", "must", "stream", "Every line is one JSON object, ended by a newline", f"{NPU} §2"),
    ("OLL-003", "must", "stream", "The stream ends with a done: true frame or an error frame",
     f"{NPU} §2", "L4", "L5", "L8"),
    ("OLL-004", "must", "stream", "The done frame carries done_reason stop or length", f"{NPU} §2", "L4"),
    ("OLL-005", "must", "stream", "Nothing follows the done or error frame", f"{NPU} §2"),
    ("OLL-006", "should", "stream", "Frames before the last carry done: false", f"{NPU} §2", "L5"),
    ("OLL-007", "must", "stream",
     "Frames have the endpoint's shape (message for /api/chat, response for /api/generate)",
     f"{NPU} §2", "L6"),
    ("OLL-008", "should", "stream", "Every frame names the same model", f"{NPU} §2"),
    ("OLL-009", "should", "non-stream", "GET /api/tags, where served, lists models with a name",
     "Ollama API reference: List local models (seed 002 does not name /api/tags)"),
    ("OLL-010", "must", "both", "The Ollama routes are served when the server is expected to (capability ollama)",
     f"{NPU} §2"),
    ("OLL-011", "must", "both", "A generation cut by num_predict ends with done_reason length",
     f"{NPU} §2 (length when generation reaches the effective max output token limit)"),
    ("OLL-012", "advisory", "both", "The Ollama routes echo X-Request-ID", f"{NPU} headers (can include)"),
    ("OLL-013", "must", "both",
     "/api/pull streams status frames (digest, total, completed while pulling) ending in success or an error",
     f"{NPU} §2 (/api/pull example)"),
    ("OLL-014", "must", "both",
     "A failed Ollama request gets an error status with {\"error\"} or a terminal error frame, never done: true",
     f"{NPU} §2 (on failure, a terminal NDJSON error object and no success-shaped done: true chunk)"),
    ("OLL-015", "should", "both",
     "An unknown model on an Ollama route is refused, not answered",
     "Ollama API reference (errors) and server/routes.go: an unknown model is 404 "
     "{\"error\": \"model \\\"<name>\\\" not found, try pulling it first\"}; no seed says more"),
)
