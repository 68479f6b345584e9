"""What a hostile server must never achieve, checked on one finished `conformance run` (tests and benchmarks/hostile.py).

- a traceback: the run crashed instead of reporting;
- a raw escape on the terminal: an ESC, C1 or bidirectional control in what the suite printed;
- an unmasked key: the key, or its distinctive part, in any written file or the terminal: as written, after JSON
  unescaping, or in what `conformance inspect` assembles from a wire body (a key split across events);
- a request to an unchosen path: a request target the suite did not build from its own paths.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conformance.engine.inspect import assembled_json, inspect_exchange
from conformance.exchange import Exchange
from conformance.protocols import load
from conformance.secrets import forms

CONTROLS = re.compile("[\x1b\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# every path the suite sends: each protocol's routes (from the registry; under /v1 or not) and /models, /health, and
# the cancel endpoint with the stream's id as one encoded segment
_ROUTES = [suffix for p in load().values() for suffix, _ in p.routes]
_OPENAI = sorted((s for s in _ROUTES if not s.startswith("/api/")), key=lambda s: -len(s))
_OLLAMA = sorted(s.removeprefix("/api/") for s in _ROUTES if s.startswith("/api/"))
CHOSEN = re.compile(r"(/v1)?(/models|" + "|".join(map(re.escape, _OPENAI))
                    + r"|/chat/completions/(?!\.\.?/)[A-Za-z0-9%._~-]+/cancel)|/health|/api/(" + "|".join(_OLLAMA) + ")")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def unescape(text: str) -> str:
    """JSON's \\u escapes decoded where they stand (with the \\/ escape), whatever surrounds them."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text).replace("\\/", "/")


def _leaks(text: str, key: str) -> bool:
    return any(form in text or form in unescape(text) for form in forms(key))


def harms(output: bytes, out: Path, key: str | None, targets: list[str]) -> list[str]:
    """The harms a run did: an empty list when it did none."""
    found = []
    text = output.decode("utf-8", "replace")
    if "Traceback" in text:
        found.append("traceback")
    if CONTROLS.search(text):
        found.append("raw escape on the terminal")
    if key and (_leaks(text, key) or _written_key(out, key)):
        found.append("unmasked key")
    from conformance.agents import corpus

    recorded = {e.path for e in corpus()}  # the agents' own paths, query included (Claude Code's ?beta=true)
    unchosen = sorted({t for t in targets if t not in recorded and (
        CHOSEN.fullmatch(t.split("?", 1)[0]) is None or "?" in t or "#" in t)})
    if unchosen:
        found.append(f"request to an unchosen path ({unchosen[0][:60]!r})")
    return found


def _written_key(out: Path, key: str) -> bool:
    for path in out.rglob("*") if out.is_dir() else []:
        if not path.is_file():
            continue
        data = path.read_bytes()
        if _leaks(data.decode("utf-8", "replace"), key):
            return True
        if path.suffix == ".body":  # what a reader of the wire log assembles from it
            meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
            exchange = Exchange(body=data, status=meta["status"], path=meta["path"],
                                headers=tuple((k, v) for k, v in meta["headers"]), request=meta.get("request"))
            try:
                assembled = json.dumps(assembled_json(inspect_exchange(exchange).analysis), ensure_ascii=False)
            except Exception:  # noqa: BLE001 - a body the analyser cannot read assembles nothing
                continue
            if _leaks(assembled, key):
                return True
    return False
