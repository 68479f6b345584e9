"""The live run: every scenario once against the target, recorded, then judged by the checks.

Order: the model is discovered, then the independent scenarios run concurrently (``workers``),
then those that measure the server alone (disconnects, the cancel endpoint), then the heavy error
scenarios (a prompt beyond the context, an oversized body), each followed by a liveness request.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import httpx

from conformance import __version__
from conformance.checks import evaluate
from conformance.client import Limits, Request, record
from conformance.exchange import Exchange, analyze
from conformance.inspect import InputError, parse_header_block, split_curl_i
from conformance.repro import curl
from conformance.results import CheckEntry, RunResult
from conformance.rules import RULES
from conformance.scenarios import HELLO, LONG, SCENARIOS, Context, Scenario, chat
from conformance.target import ConfigError, Target, Unreachable

HEAVY = frozenset({"error-context-overflow", "error-oversized"})
ALONE = frozenset({"disconnect", "cancel", "burst"})
BURST = 12
CAPABILITY_SCENARIOS = {
    "tools": "tools-required", "reasoning": "reasoning", "structured": "json-schema-strict",
    "usage": "stream-usage", "ollama": "ollama-tags", "cancel-endpoint": "cancel-unknown",
    "request-id": "stream-plain",
}
Log = Callable[[str], None]


@dataclass
class Outcome:
    """A scenario's exchanges (the first is the one the scenario is about) and its reproducer."""

    scenario: Scenario
    exchanges: list[Exchange]
    reproducer: str
    elapsed_s: float


class Runner:
    """Runs the scenarios against one target and judges them."""

    def __init__(self, target: Target, log: Log | None = None) -> None:
        self.target = target
        self.log = log or (lambda _: None)
        self.client = httpx.Client(limits=httpx.Limits(max_connections=max(8, target.workers * 2)),
                                   follow_redirects=False)
        self.model = target.model or ""

    def close(self) -> None:
        self.client.close()

    # -- requests --------------------------------------------------------------------------

    def send(self, req: Request, limits: Limits | None = None) -> Exchange:
        return record(self.client, self.target.base_url, req, limits or self.target.limits, self.target.api_key)

    def discover(self) -> str:
        """The model to use: --model, else the first id GET /v1/models lists. Raises ``Unreachable``."""
        ex = self.send(Request(method="GET", path="/v1/models"), replace(self.target.limits, total=30.0))
        if ex.status is None:
            raise Unreachable(f"{self.target.base_url} did not answer: {ex.observations.get('error', 'no response')}")
        if not self.model:
            try:
                data = json.loads(ex.body).get("data") or []
                self.model = str(data[0]["id"])
            except (ValueError, AttributeError, IndexError, KeyError, TypeError):
                raise ConfigError(f"{self.target.base_url}/v1/models answered {ex.status} without a model id; "
                                  "pass --model") from None
        return self.model

    # -- scenario kinds --------------------------------------------------------------------

    def run_scenario(self, sc: Scenario) -> Outcome:
        ctx = Context(model=self.model, profile=self.target.profile)
        req = sc.build(ctx)
        req.scenario = sc.name
        start = time.monotonic()
        kind = {"followup": self._followup, "disconnect": self._disconnect, "cancel": self._cancel,
                "http10": self._http10, "burst": self._burst}.get(sc.kind, self._plain)
        exchanges = kind(req)
        self.log(f"{sc.category:12} {sc.name:26} {exchanges[0].status} {time.monotonic() - start:6.2f}s")
        return Outcome(sc, exchanges, curl(self.target.base_url, req, self.target.api_key), time.monotonic() - start)

    def _plain(self, req: Request) -> list[Exchange]:
        return [self.send(req)]

    def _liveness(self) -> int | None:
        ex = self.send(chat(Context(self.model), HELLO, stream=False, max_tokens=8),
                       replace(self.target.limits, total=60.0))
        return ex.status

    def _followup(self, req: Request) -> list[Exchange]:
        ex = self.send(req)
        return [replace(ex, observations={**ex.observations, "followup_status": self._liveness()})]

    def _first_byte(self, req: Request) -> float | None:
        ex = self.send(replace(req, stop_after_events=1))
        return ex.arrivals[0][0] if ex.arrivals else None

    def _disconnect(self, req: Request) -> list[Exchange]:
        ctx = Context(self.model)
        baseline = self._first_byte(chat(ctx, HELLO, max_tokens=8))
        other: list[Exchange] = []
        thread = threading.Thread(target=lambda: other.append(self.send(chat(ctx, LONG, max_tokens=24))))
        thread.start()
        before = self._generations()
        ex = self.send(replace(req, stop_after_events=1))
        obs: dict[str, Any] = {"baseline_ttfb_s": baseline}
        running = self._running_after()
        after = self._generations()
        if running is not None:
            obs.update(running_after=running, signal="/health generations.running")
            if before and after and "cancelled" in before and "cancelled" in after:
                obs["cancelled_delta"] = int(after["cancelled"]) - int(before["cancelled"])
        else:
            obs["followup_ttfb_s"] = self._first_byte(chat(ctx, HELLO, max_tokens=8))
        thread.join(self.target.limits.total + 5)
        if other:
            done = analyze(other[0], self.target.profile)
            obs["other_stream_done"] = other[0].status == 200 and done.assembled.done and done.assembled.error is None
        return [replace(ex, observations={**ex.observations, "disconnect": obs})]

    def _generations(self) -> dict[str, Any] | None:
        """The server's generation counters (the reference server's /health), if it exposes them."""
        try:
            counters = self.client.get(self.target.base_url + "/health", timeout=2.0).json()["generations"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None
        return counters if isinstance(counters, dict) else None

    def _running_after(self, grace: float = 1.0) -> int | None:
        """Running generations, polled until 0 or the grace ends (short: a fast model finishes anyway)."""
        deadline = time.monotonic() + grace
        while True:
            counters = self._generations()
            if counters is None or not isinstance(counters.get("running"), int):
                return None
            if counters["running"] == 0 or time.monotonic() > deadline:
                return int(counters["running"])
            time.sleep(0.02)

    def _cancel(self, req: Request) -> list[Exchange]:
        result: list[Exchange] = []
        first = threading.Event()
        thread = threading.Thread(target=lambda: result.append(self._send_signalling(req, first)))
        thread.start()
        first.wait(self.target.limits.first_byte)
        rid = req.headers.get("X-Request-ID", "")
        call = self.send(Request(path=f"/v1/chat/completions/{rid}/cancel", body={}, intent="cancel",
                                 scenario="cancel-endpoint/call"))
        thread.join(self.target.limits.total + 5)
        return (result or []) + [call]

    def _send_signalling(self, req: Request, first: threading.Event) -> Exchange:
        req = replace(req, first_event=first)
        return self.send(req)

    def _burst(self, req: Request) -> list[Exchange]:
        """Many requests at once, each left after its first event; the refused ones are what it shows."""
        arrived, release = threading.Semaphore(0), threading.Event()
        held = replace(req, stop_after_events=1, arrived=arrived, hold=release)

        def one(_: int) -> Exchange:
            ex = self.send(held)
            if "disconnected_after_events" not in ex.observations:
                arrived.release()  # refused (or ended) without holding a stream
            return ex

        with ThreadPoolExecutor(max_workers=BURST) as pool:
            futures = [pool.submit(one, i) for i in range(BURST)]
            for _ in range(BURST):  # every request is answered and every stream held, then all let go
                arrived.acquire(timeout=self.target.limits.first_byte)
            release.set()
            exchanges = [f.result() for f in futures]
        refused = [ex for ex in exchanges if ex.status == 429]
        time.sleep(0.5)  # let the server notice the disconnects before the next scenario
        return (refused or exchanges[:1])[:2]

    def _http10(self, req: Request) -> list[Exchange]:
        return [http10(self.target.base_url, req, self.target.limits, self.target.api_key)]

    # -- the whole run -----------------------------------------------------------------------

    def run(self, rule_ids: set[str] | None = None, only: set[str] | None = None) -> RunResult:
        """Run the scenarios (all, or those named in ``only``) and judge the rules (all, or ``rule_ids``)."""
        unknown = sorted((only or set()) - {sc.name for sc in SCENARIOS})
        if unknown:
            raise ConfigError(f"unknown scenario {unknown[0]!r}")
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        clock = time.monotonic()
        self.discover()
        if only is not None:  # the scenarios that probe the capabilities the chosen ones need
            only = only | {CAPABILITY_SCENARIOS[sc.needs] for sc in SCENARIOS if sc.name in only and sc.needs} \
                | {CAPABILITY_SCENARIOS["request-id"]}
        chosen = [sc for sc in SCENARIOS if only is None or sc.name in only]
        ordered = [sc for sc in chosen if sc.kind not in ALONE and sc.name not in HEAVY]
        with ThreadPoolExecutor(max_workers=max(1, self.target.workers)) as pool:
            outcomes = list(pool.map(self.run_scenario, ordered))
        caps = capabilities(outcomes, self.target.expect)
        for sc in chosen:
            if sc.kind in ALONE and (sc.needs is None or caps[sc.needs]["supported"]
                                     or sc.needs in self.target.expect):
                outcomes.append(self.run_scenario(sc))
        outcomes += [self.run_scenario(sc) for sc in chosen if sc.name in HEAVY]
        result = RunResult(tool={"name": "chat-conformance", "version": __version__}, started_at=started,
                           target={"base_url": self.target.base_url, "model": self.model,
                                   "profile": self.target.profile, "capabilities": caps},
                           strict=self.target.strict)
        for outcome in outcomes:
            result.checks += judge(outcome, caps, self.target, rule_ids)
            result.scenarios.append({"name": outcome.scenario.name, "category": outcome.scenario.category,
                                     "status": outcome.exchanges[0].status, "elapsed_s": round(outcome.elapsed_s, 3),
                                     "aborted": outcome.exchanges[0].observations.get("aborted")})
        result.duration_s = time.monotonic() - clock
        return result


def capabilities(outcomes: list[Outcome], expect: frozenset[str]) -> dict[str, dict[str, Any]]:
    """Each capability, probed from the scenario that shows it (or expected by the user)."""
    by_name = {o.scenario.name: o.exchanges[0] for o in outcomes}
    caps: dict[str, dict[str, Any]] = {}
    for name, scenario in CAPABILITY_SCENARIOS.items():
        ex = by_name.get(scenario)
        supported, evidence = (False, f"scenario {scenario} did not run") if ex is None else _probe(name, ex)
        caps[name] = {"supported": supported, "source": "expected" if name in expect else "probed",
                      "evidence": evidence}
    return caps


def _probe(name: str, ex: Exchange) -> tuple[bool, str]:
    status = ex.status
    head = ex.body[:160].decode("utf-8", "replace")
    if status is None:
        return False, f"no response ({ex.observations.get('aborted')})"
    if name == "request-id":
        got = ex.header("x-request-id")
        return got == ex.request_header("x-request-id"), f"X-Request-ID {got!r} returned"
    if name == "cancel-endpoint":
        ok = status == 404 and '"cancelled"' in head
        return ok, f"unknown id answered {status} {head!r}"
    if name == "ollama":
        return status == 200 and head.lstrip().startswith("{"), f"GET /api/tags answered {status}"
    if not 200 <= status < 300:
        return False, f"answered {status} {head!r}"
    a = analyze(ex)
    if name == "usage":
        return a.assembled.usage is not None, "a usage chunk" if a.assembled.usage else "no usage chunk"
    if name == "reasoning":
        reasoning = any(c.reasoning for c in a.assembled.choices.values())
        return reasoning, "a reasoning channel" if reasoning else "no reasoning in the answer"
    return True, f"answered {status}"


def judge(outcome: Outcome, caps: dict[str, dict[str, Any]], target: Target,
          rule_ids: set[str] | None) -> list[CheckEntry]:
    """Check entries for every rule each exchange of the scenario could show."""
    sc = outcome.scenario
    skip = _skip_reason(sc, caps, target)
    if skip:  # the scenario's own category is skipped, with the evidence
        return [CheckEntry(r.id, r.category, r.level, sc.name, "skipped", skip, None, outcome.reproducer)
                for r in RULES if r.category == sc.category and (rule_ids is None or r.id in rule_ids)]
    entries: list[CheckEntry] = []
    shown = [name for name, probe in CAPABILITY_SCENARIOS.items() if probe == sc.name and name in target.expect]
    for index, ex in enumerate(outcome.exchanges):
        if index == 0 and shown:  # the scenario that probes an expected capability also judges it
            cap = {"name": shown[0], **caps[shown[0]]}
            ex = replace(ex, observations={**ex.observations, "capability": cap})
        name = ex.scenario if ex.scenario not in ("live", "") else sc.name
        for verdict in evaluate(analyze(ex, target.profile), rule_ids):
            if verdict.outcome == "not_applicable":
                continue
            rule = verdict.rule
            outcome_name, message = verdict.outcome, verdict.message
            if rule.id == "TRN-006" and not caps["request-id"]["supported"] and "request-id" not in target.expect:
                outcome_name, message = "skipped", f"capability request-id unsupported: {caps['request-id']['evidence']}"
            evidence = None
            if verdict.findings:
                first = verdict.findings[0]
                message = "\n".join(f.message for f in verdict.findings[:3])
                evidence = {"event_index": first.event_index, "byte_offset": first.byte_offset,
                            "excerpt": first.excerpt}
            entries.append(CheckEntry(rule.id, rule.category, rule.level, name, outcome_name, message, evidence,
                                      outcome.reproducer))
    return entries


def _skip_reason(sc: Scenario, caps: dict[str, dict[str, Any]], target: Target) -> str:
    if sc.needs is None or sc.needs in target.expect or caps[sc.needs]["supported"]:
        return ""
    return f"capability {sc.needs} unsupported: {caps[sc.needs]['evidence']}"


def http10(base_url: str, req: Request, limits: Limits, api_key: str | None = None) -> Exchange:
    """One request over HTTP/1.0 on a raw socket, read until the server closes (or the limits)."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    body = req.encoded() or b""
    head = [f"{req.method} {parts.path}{req.path} HTTP/1.0", f"Host: {parts.hostname}:{port}",
            "Content-Type: application/json", f"Content-Length: {len(body)}"]
    if api_key:
        head.append(f"Authorization: Bearer {api_key}")
    raw = bytearray()
    arrivals: list[tuple[float, int]] = []
    obs: dict[str, Any] = {}
    start = time.monotonic()
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=limits.connect) as sock:
            conn: socket.socket = ssl.create_default_context().wrap_socket(sock, server_hostname=parts.hostname) \
                if parts.scheme == "https" else sock
            conn.settimeout(max(limits.first_byte, limits.idle))
            conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
            while chunk := conn.recv(65536):
                raw += chunk
                arrivals.append((round(time.monotonic() - start, 4), len(raw)))
                if len(raw) > limits.max_bytes or time.monotonic() - start > limits.total:
                    obs["aborted"] = "byte cap" if len(raw) > limits.max_bytes else "total timeout"
                    break
    except (OSError, ssl.SSLError) as exc:
        obs.setdefault("aborted", "idle timeout" if isinstance(exc, socket.timeout) else "transport error")
        obs["error"] = str(exc)[:200]
    try:
        header_text, body_bytes = split_curl_i(bytes(raw)) if raw.startswith(b"HTTP/") else (None, bytes(raw))
    except InputError:
        header_text, body_bytes = None, bytes(raw)
    status, version, headers = parse_header_block(header_text) if header_text else (None, "HTTP/1.0", [])
    offset = len(raw) - len(body_bytes)
    return Exchange(request=req.body, body=body_bytes, status=status, headers=tuple(headers), method=req.method,
                    path=req.path, request_headers=(("content-type", "application/json"),), http_version=version,
                    request_http_version="HTTP/1.0", scenario=req.scenario, intent=req.intent,
                    arrivals=tuple((t, n - offset) for t, n in arrivals if n > offset), observations=obs)

