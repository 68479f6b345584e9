"""The wire log: every exchange of a run, saved under ``<report dir>/wire/`` and loaded back.

``run.json`` holds the run (settings, model, timing) and its outcomes in run order; each exchange
is ``NNN-<scenario>.json`` (request with secrets scrubbed, status, headers, arrival times,
observations) beside ``NNN-<scenario>.body``, the body exactly as received up to the byte cap
(secrets masked with ``*`` of the same length, so offsets still hold). ``conformance inspect
NNN.body --headers ...`` reads a body file; ``conformance rejudge`` re-judges the whole log.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import struct
import tempfile
import threading
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conformance.engine.outcome import Outcome
from conformance.errors import ConfigError
from conformance.exchange import Exchange
from conformance.model import Intent
from conformance.model.observations import Observations
from conformance.scenarios import BY_NAME
from conformance.secrets import Scrubber
from conformance.wire.body import HOLD_BYTES, Body, SpooledBody, whole
from conformance.wire.untrusted import json_text

FORMAT = 1
WIRE_DIR = "wire"
INLINE_REQUEST = 64 * 1024  # larger request bodies go to a .request.json.gz file beside


@dataclass(frozen=True)
class WireRun:
    """What ``run.json`` says about the run, besides its outcomes."""

    tool: dict[str, str]
    started_at: str
    duration_s: float
    model: str
    settings: dict[str, Any]
    incomplete: dict[str, Any] | None = None  # the run timeout ended the run (RunResult.incomplete)
    unsent: dict[str, str] = field(default_factory=dict)  # scenarios not sent, their route not served: why


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60]


class Ahead:
    """Exchange files written as each scenario ends, in its worker (``exchanges``), under names of their own (a
    counter, never what a server sent) in a hidden folder of the report dir; ``save`` moves them into the log under
    their run-order names. What depends on the whole run is written at its end: ``run.json``, the HAR, and the
    ``.json`` of an exchange whose request goes to a file of its own (it names that file by the stem). The files are the
    bytes ``save`` alone writes (tests/wire/test_ahead.py). ``close`` removes what is left (a cut scenario's)."""

    def __init__(self, directory: Path, scrub: Scrubber) -> None:
        self.directory = directory
        self.folder: Path | None = None  # made with the first exchange (a run that never sends leaves nothing)
        self.scrub = scrub
        self._lock = threading.Lock()
        self._count = 0
        self._written: dict[int, tuple[Exchange, str, Body, bool]] = {}  # (exchange, name, masked body, inline)

    def exchanges(self, exchanges: list[Exchange]) -> None:
        for ex in exchanges:
            request_text = json_text(ex.request)
            with self._lock:
                if self.folder is None:
                    self.directory.mkdir(parents=True, exist_ok=True)
                    self.folder = Path(tempfile.mkdtemp(prefix=".wire-", dir=self.directory))
                folder = self.folder
                self._count += 1
                name = f"{self._count:06d}"
            body = self.scrub.data(ex.body)
            inline = len(request_text) <= INLINE_REQUEST
            if inline:
                _save_exchange(folder, name, ex, self.scrub, body, request_text)
            else:  # the request file compressed here; the .json, which names it by its stem, when the stem is known
                _write_request(folder / f"{name}{REQUEST_SUFFIX}", self.scrub, request_text)
                _write_body(folder, name, body)
            with self._lock:
                self._written[id(ex)] = (ex, name, body, inline)

    def take(self, ex: Exchange, wire: Path, stem: str) -> Body | None:
        """Move the exchange's files into the log as ``stem`` and give its masked body (None: not written ahead)."""
        with self._lock:
            entry = self._written.pop(id(ex), None)
        if entry is None or entry[0] is not ex:  # (the entry holds its exchange: an id is not reused while kept)
            return None
        _, name, body, inline = entry
        assert self.folder is not None
        for suffix in (".body", ".json" if inline else REQUEST_SUFFIX):
            os.replace(self.folder / f"{name}{suffix}", wire / f"{stem}{suffix}")
        if not inline:
            _write_meta(wire, stem, ex, self.scrub, inline=False)
        return body

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        with self._lock:
            self._written.clear()


def save(directory: Path, run: WireRun, outcomes: list[Outcome], scrub: Scrubber, ahead: Ahead | None = None) -> Path:
    """Write the wire log of ``outcomes`` into ``directory/wire``; return that folder. With ``ahead``, the exchange
    files it wrote during the run are moved in, not written again."""
    wire = directory / WIRE_DIR
    wire.mkdir(parents=True, exist_ok=True)
    for old in wire.iterdir():  # a log is one run: nothing of an earlier run stays beside it
        if old.is_file():
            old.unlink()
    listed = []
    stems = iter(_stems(outcomes))
    saved: list[tuple[str, Exchange, Body]] = []  # each body masked once, for its .body file and the HAR
    for outcome in outcomes:
        files = []
        for ex in outcome.exchanges:
            stem = next(stems)
            body = ahead.take(ex, wire, stem) if ahead is not None else None
            if body is None:
                body = scrub.data(ex.body)
                _save_exchange(wire, stem, ex, scrub, body)
            saved.append((stem, ex, body))
            files.append(stem)
        listed.append({"scenario": outcome.scenario.name, "elapsed_s": outcome.elapsed_s,  # exact: reports round it
                       "reproducer": scrub.text(outcome.reproducer), "exchanges": files})
    doc = {"format": FORMAT, **asdict(run), "outcomes": listed}
    if not run.unsent:  # kept out of the logs of runs that sent every scenario (most)
        del doc["unsent"]
    (wire / "run.json").write_text(scrub.text(json_text(doc, indent=1)) + "\n", encoding="utf-8")
    har = to_har(run, saved, scrub)
    (wire / HAR_FILE).write_text(scrub.text(json_text(har, indent=1)) + "\n", encoding="utf-8")
    return wire


HAR_FILE = "wire.har"
HAR_INLINE = 256 * 1024  # a larger body is only referenced (its .body file beside): the HAR stays openable


def _stems(outcomes: list[Outcome]) -> list[str]:
    stems, number = [], 0
    for outcome in outcomes:
        for ex in outcome.exchanges:
            number += 1
            stems.append(f"{number:03d}-{_safe(ex.scenario if ex.scenario not in ('', 'live') else outcome.scenario.name)}")
    return stems


def to_har(run: WireRun, exchanges: list[tuple[str, Exchange, Body]], scrub: Scrubber) -> dict[str, Any]:
    """The wire log as HAR 1.2 (opens in every browser's devtools and in HAR tools): one entry per exchange, the
    body inline up to HAR_INLINE bytes (text, or base64 when it is not UTF-8) and always named by its exact-bytes
    file (``_bodyFile``); the request inline up to HAR_INLINE characters, a longer one named by its file
    (``_requestFile``); the suite's own observations as ``_observations``."""
    import base64

    base = str(run.settings.get("base_url") or "").rstrip("/")
    entries = []
    for stem, ex, body in exchanges:  # body: as written to the .body file, masked
        content: dict[str, Any] = {"size": len(body), "mimeType": ex.header("content-type") or "",
                                   "_bodyFile": f"{stem}.body"}
        if len(body) <= HAR_INLINE:
            inline = whole(body)
            try:
                content["text"] = inline.decode("utf-8")
            except UnicodeDecodeError:
                content.update(text=base64.b64encode(inline).decode("ascii"), encoding="base64")
        else:
            content["comment"] = f"{len(body)} bytes: see {stem}.body"
        sent = json_text(ex.request) if ex.request is not None else None
        post: dict[str, Any] = {}
        if sent is not None:
            post = {"mimeType": ex.request_header("content-type") or "application/json"}
            if ex.observations.sent_bytes is not None:  # the record names a bulk: the exact bytes are the reproducer's
                post.update(text=sent, _requestFile=f"../reproducers/{_safe(ex.scenario)}.json.gz",
                            comment=f"this record names the bulk of a {ex.observations.sent_bytes:,}-byte request; the "
                            f"bytes sent are ../reproducers/{_safe(ex.scenario)}.json.gz (gzipped)")
            elif len(sent) <= HAR_INLINE:
                post["text"] = sent
            else:  # (the oversized request is 16 MiB) its exact text is the request file beside, which _save_exchange
                post.update(comment=f"{len(sent)} characters: see {stem}{REQUEST_SUFFIX}",  # writes past 64 KiB
                            _requestFile=f"{stem}{REQUEST_SUFFIX}")
        elapsed = float(ex.observations.elapsed_s or (ex.arrivals[-1][0] if ex.arrivals else 0.0))
        first = ex.arrivals[0][0] if ex.arrivals else elapsed
        entries.append({
            "startedDateTime": run.started_at, "time": round(elapsed * 1000, 3),
            "request": {"method": ex.method, "url": base + ex.path, "httpVersion": ex.request_http_version,
                        "headers": [{"name": k, "value": v} for k, v in scrub.headers(ex.request_headers)],
                        "queryString": [], "cookies": [], "headersSize": -1, "bodySize": len(sent or ""),
                        **({"postData": post} if post else {})},
            "response": {"status": ex.status or 0, "statusText": "", "httpVersion": ex.http_version,
                         "headers": [{"name": k, "value": v} for k, v in ex.headers], "cookies": [],
                         "content": content, "redirectURL": "", "headersSize": -1, "bodySize": len(body)},
            "cache": {}, "timings": {"send": 0, "wait": round(first * 1000, 3),
                                     "receive": round(max(elapsed - first, 0.0) * 1000, 3)},
            "comment": ex.scenario, "_observations": ex.observations.to_json()})
    return {"log": {"version": "1.2", "creator": {"name": run.tool.get("name", "chat-conformance"),
                                                  "version": run.tool.get("version", "")},
                    "entries": entries}}


def _save_exchange(wire: Path, stem: str, ex: Exchange, scrub: Scrubber, body: Body,
                   request_text: str | None = None) -> None:
    if request_text is None:
        request_text = json_text(ex.request)
    inline = len(request_text) <= INLINE_REQUEST
    if not inline:
        _write_request(wire / f"{stem}{REQUEST_SUFFIX}", scrub, request_text)
    _write_meta(wire, stem, ex, scrub, inline)
    _write_body(wire, stem, body)


REQUEST_SUFFIX = ".request.json.gz"


GZIP_HEADER = gzip.compress(b"", 6, mtime=0)[:10]  # (no time in it: a file written again is the same bytes)
PIECE = 1024 * 1024  # characters of a request encoded and compressed at a time


def _write_request(path: Path, scrub: Scrubber, request_text: str) -> None:
    """The request's text, gzipped: the bytes ``gzip.compress(text, 6, mtime=0)`` gives, a piece at a time (the
    oversized request is 16 MiB: never held encoded whole beside its text)."""
    text = scrub.text(request_text)
    deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    crc = size = 0
    with path.open("wb") as f:
        f.write(GZIP_HEADER)
        for at in range(0, len(text), PIECE):
            data = text[at:at + PIECE].encode("utf-8")
            crc, size = zlib.crc32(data, crc), size + len(data)
            f.write(deflate.compress(data))
        f.write(deflate.flush() + struct.pack("<II", crc, size & 0xFFFFFFFF))


def _write_meta(wire: Path, stem: str, ex: Exchange, scrub: Scrubber, inline: bool) -> None:
    meta: dict[str, Any] = {
        "method": ex.method, "path": ex.path, "scenario": ex.scenario, "intent": ex.intent,
        "request_http_version": ex.request_http_version,
        "request_headers": [list(h) for h in scrub.headers(ex.request_headers)],
        "status": ex.status, "http_version": ex.http_version, "headers": [list(h) for h in ex.headers],
        "observations": ex.observations.to_json(), "body_bytes": len(ex.body),
    }
    if inline:
        meta["request"] = ex.request
    else:
        meta["request_file"] = f"{stem}{REQUEST_SUFFIX}"
    text = json_text(meta, indent=1)
    # the arrivals last, on one line: a long stream has thousands of (seconds, bytes) pairs, four lines each indented
    # (and the pure-Python encoder's); numbers only, so nothing to escape or mask in them
    text = f"{text[:-2]},\n \"arrivals\": {json.dumps([list(a) for a in ex.arrivals])}\n}}"
    (wire / f"{stem}.json").write_text(scrub.text(text) + "\n", encoding="utf-8")


def _write_body(wire: Path, stem: str, body: Body) -> None:
    if isinstance(body, SpooledBody):  # copied from its spool file, a slice at a time
        body.copy_to(wire / f"{stem}.body")
    else:
        (wire / f"{stem}.body").write_bytes(body)


def load(directory: Path) -> tuple[WireRun, list[Outcome]]:
    """The run and its outcomes from a report dir (or its ``wire`` folder); ``ConfigError`` if none is there."""
    wire = directory if (directory / "run.json").is_file() else directory / WIRE_DIR
    try:
        doc = json.loads((wire / "run.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{str(directory)!r} holds no wire log (no {WIRE_DIR}/run.json): "
                          "run `conformance run --report-dir` first") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the wire log in {str(wire)!r}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("outcomes"), list):
        raise ConfigError(f"{str(wire / 'run.json')!r} is not a wire log of format {FORMAT}")
    run = WireRun(tool=doc["tool"], started_at=doc["started_at"], duration_s=float(doc["duration_s"]),
                  model=str(doc["model"]), settings=dict(doc["settings"]), incomplete=doc.get("incomplete"),
                  unsent=_unsent(doc.get("unsent")))
    outcomes = []
    for item in doc["outcomes"]:
        scenario = BY_NAME.get(item["scenario"])
        if scenario is None:
            raise ConfigError(f"the wire log names scenario {item['scenario']!r}, which this version does not have")
        exchanges = [_load_exchange(wire, stem) for stem in item["exchanges"]]
        outcomes.append(Outcome(scenario, exchanges, item["reproducer"], float(item["elapsed_s"])))
    return run, outcomes


def _unsent(saved: Any) -> dict[str, str]:
    """The saved scenarios not sent (a route not served) that this version has; a malformed entry says nothing."""
    if not isinstance(saved, dict):
        return {}
    return {k: v for k, v in saved.items() if isinstance(k, str) and isinstance(v, str) and k in BY_NAME}


def _load_exchange(wire: Path, stem: str) -> Exchange:
    try:
        meta = json.loads((wire / f"{stem}.json").read_text(encoding="utf-8"))
        path = wire / f"{stem}.body"
        body: Body = SpooledBody(path) if path.stat().st_size > HOLD_BYTES else path.read_bytes()
        request = meta.get("request")
        if "request_file" in meta:
            request = json.loads(gzip.decompress((wire / meta["request_file"]).read_bytes()).decode("utf-8"))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot read exchange {stem!r} of the wire log: {exc}") from None
    return Exchange(request=request, body=body, status=meta["status"],
                    headers=tuple((str(k), str(v)) for k, v in meta["headers"]), method=meta["method"],
                    path=meta["path"], request_headers=tuple((str(k), str(v)) for k, v in meta["request_headers"]),
                    http_version=meta["http_version"], request_http_version=meta["request_http_version"],
                    arrivals=tuple((float(t), int(n)) for t, n in meta["arrivals"]),
                    intent=Intent(meta["intent"]) if meta["intent"] else None,
                    scenario=meta["scenario"], observations=Observations.from_json(meta["observations"]))
