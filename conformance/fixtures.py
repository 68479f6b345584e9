"""Recorded fixtures: ``<dir>/<name>.sse|.ndjson|.body`` (exact bytes) beside ``<name>.json``.

The sidecar holds the request, the response status and headers, where the bytes came from, the
profile to judge them by, and what is expected: the assembled message (the keys given) and the
exact set of rule ids that fail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.exchange import Exchange
from conformance.model import Intent
from conformance.model.observations import Observations

BODY_SUFFIXES = (".sse", ".ndjson", ".body")
# conformance/_fixtures is the repository's fixtures/ (a link in a checkout, copied into the wheel), so
# `replay` and `fuzz-client` serve the same recorded bytes from an installed package
FIXTURES_DIR = Path(__file__).parent / "_fixtures"


@dataclass(frozen=True)
class Fixture:
    """One recorded exchange and what it is expected to show."""

    name: str
    body_path: Path
    meta: dict[str, Any]
    exchange: Exchange
    profile: str = "openai"
    expected_failed: frozenset[str] = frozenset()
    expected_assembled: dict[str, Any] = field(default_factory=dict)


def _pairs(value: Any) -> tuple[tuple[str, str], ...]:
    if isinstance(value, dict):
        return tuple((str(k), str(v)) for k, v in value.items())
    return tuple((str(k), str(v)) for k, v in value or [])


def exchange_from_meta(meta: dict[str, Any], body: bytes) -> Exchange:
    """Build an ``Exchange`` from a sidecar's fields and the body bytes."""
    return Exchange(
        request=meta.get("request"),
        body=body,
        status=meta.get("status", 200),
        headers=_pairs(meta.get("headers")),
        method=meta.get("method", "POST"),
        path=meta.get("path", "/v1/chat/completions"),
        request_headers=_pairs(meta.get("request_headers")),
        http_version=meta.get("http_version", "HTTP/1.1"),
        request_http_version=meta.get("request_http_version", "HTTP/1.1"),
        arrivals=tuple((float(t), int(n)) for t, n in meta.get("arrivals", [])),
        intent=Intent(meta["intent"]) if meta.get("intent") else None,
        scenario=meta.get("scenario", "fixture"),
        observations=Observations.from_json(meta.get("observations")),
    )


def load(sidecar: Path) -> Fixture:
    """Load one fixture from its sidecar path."""
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    body_path = next((sidecar.with_suffix(s) for s in BODY_SUFFIXES if sidecar.with_suffix(s).exists()), None)
    if body_path is None:
        raise FileNotFoundError(f"{sidecar} has no body file beside it")
    expected = meta.get("expected", {})
    return Fixture(
        name=str(sidecar.relative_to(sidecar.parent.parent).with_suffix("")),
        body_path=body_path,
        meta=meta,
        exchange=exchange_from_meta(meta, body_path.read_bytes()),
        profile=meta.get("profile", "openai"),
        expected_failed=frozenset(expected.get("failed", [])),
        expected_assembled=dict(expected.get("assembled", {})),
    )


def load_all(root: Path = FIXTURES_DIR, pattern: str = "*/*.json") -> list[Fixture]:
    """Every fixture under ``root``, sorted by name."""
    return [load(path) for path in sorted(root.glob(pattern))]
