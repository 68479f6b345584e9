"""The choreography of a live run: each scenario kind's requests against the target, recorded.

Order: the model is discovered, then the independent scenarios run concurrently (``workers``),
then those that measure the server alone (disconnects, the cancel endpoint), then the heavy error
scenarios (a prompt beyond the context, an oversized body), each followed by a liveness request.
Judging is ``conformance.engine.judge``: it reads only the recorded outcomes, so a saved wire log
is judged exactly as the live run was.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from conformance.client import ABANDONED, Limits, Request, cancel_path, record, record_http10
from conformance.engine import events as ev
from conformance.errors import ConfigError, Unreachable
from conformance.exchange import Exchange, analyze
from conformance.model import BAD_INPUT, Intent
from conformance.model.observations import Burst, Disconnect, Followup, Observations
from conformance.model.profiles import PROFILES
from conformance.protocols import answers_for
from conformance.repro import MAX_INLINE_BODY, scenario_script
from conformance.scenarios import HELLO, LONG, Context, Scenario, chat, context_tokens
from conformance.settings import Settings, queue_wait
from conformance.untrusted import path_segment as segment_of
from conformance.wire.errors import WireError
from conformance.wire.sse import SSEDecoder

HEAVY = frozenset({"error-context-overflow", "error-oversized"})
CLOCK_SPAN_S = 1.3  # how long the clock scenario's stream should last
CLOCK_MAX_TOKENS = 1536
LOST = frozenset({"protocol error", "transport error", "connect error"})  # the connection failed, not a limit
ALONE = frozenset({"disconnect", "cancel", "burst"})
BURST = 12
REFUSAL_GRACE = 0.5  # after the burst's first refusal, how long the other answers have to arrive
RUN_TIMEOUT = "run timeout"
STOPPED = "the server stopped answering"  # why the remaining scenarios were cut (Runner.silent)
SILENT_IN_A_ROW = 3  # requests in a row with no response within their limits: the server has stopped answering
NO_RESPONSE = frozenset({"first-byte timeout", "idle timeout", "total timeout", "refusal deadline", "send timeout",
                         "connect timeout"})
# seed 003 §6: servers list embedding, reranking, speech and image models beside chat ones; no field tells them
# apart, the practical filter is the name. Discovery takes the first id that does not look like one.
NOT_CHAT = re.compile(r"embed|rerank|bge|clip|whisper|tts|asr|speech|audio|image|flux|sdxl|diffusion", re.IGNORECASE)
Emit = Callable[[ev.Event], None]


class Gate:
    """Requests run shared; a resend after a lost connection runs alone (no other request of the run in flight).
    A waiting resend holds new requests back, so it is not starved; it waits at most its time limit."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def alone(self, timeout: float) -> Iterator[bool]:
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiting += 1
            try:
                while (self._writer or self._readers) and (left := deadline - time.monotonic()) > 0:
                    self._cond.wait(left)
                got = not (self._writer or self._readers)
                if got:
                    self._writer = True
            finally:
                self._waiting -= 1
                self._cond.notify_all()
        try:
            yield got
        finally:
            if got:
                with self._cond:
                    self._writer = False
                    self._cond.notify_all()


@dataclass
class Outcome:
    """A scenario's exchanges (the first is the one the scenario is about) and its reproducer."""

    scenario: Scenario
    exchanges: list[Exchange]
    reproducer: str
    elapsed_s: float


class Runner:
    """Runs the scenarios against one target and records their exchanges."""

    def __init__(self, settings: Settings, emit: Emit | None = None) -> None:
        if settings.base_url is None:
            raise ConfigError("no base URL to run against")
        self.settings = settings
        self.base_url: str = settings.base_url
        self.emit: Emit = emit or (lambda _: None)
        self.model = settings.model or ""
        self.total = 0
        self.done = 0
        self._lock = threading.Lock()
        self.deadline = time.monotonic() + settings.run_timeout  # the run's own bound (--run-timeout)
        self.gate = Gate()
        self.not_run: list[str] = []  # scenarios the run timeout left out or cut
        self.silent = 0  # requests in a row that got no response within their time limits
        self.stopped: str | None = None  # why the rest of the run is cut: the server stopped answering, or -x
        self.stop_label = STOPPED  # how a cut scenario is labelled on its progress line
        self.recorded: list[Outcome] = []  # the outcomes so far (-x judges each against them)
        self.context: int | None = None  # the context length the server states, in tokens
        self.plain_first_event: float | None = None
        self.listed: list[str] | None = None  # the model ids GET /v1/models listed (None: no list)
        served = "unknown-model-served" in PROFILES[settings.profile].allows
        self.refuse = BAD_INPUT - {Intent.UNKNOWN_MODEL} if served else BAD_INPUT  # requests under the refusal deadline

    def close(self) -> None:
        """Nothing to release: every request has a connection of its own."""

    # -- requests --------------------------------------------------------------------------

    def _with_headers(self, req: Request) -> Request:
        """-H: on every request, the scenario's own headers winning."""
        return replace(req, headers={**dict(self.settings.headers), **req.headers}) if self.settings.headers else req

    def send(self, req: Request, limits: Limits | None = None) -> Exchange:
        req = self._with_headers(req)
        if limits is None:
            limits = self.settings.refusal if req.intent in self.refuse else self.settings.limits
        if self.stopped is not None:  # the server has stopped answering: nothing more is sent, the scenario is cut
            return Exchange(request=req.body, body=b"", status=None, headers=(), method=req.method, path=req.path,
                            intent=req.intent, scenario=req.scenario,
                            observations=Observations(aborted=RUN_TIMEOUT, error=self.stopped))
        start = time.monotonic()
        ex = self._record(req, limits)
        self._count_silence(ex)
        tries, waited = 0, 0.0
        while (wait := retry_after(ex)) is not None and req.hold is None:
            # the request and its retries share one time limit, T (--timeout's total): the run's bound holds
            budget = max(limits.total, self.settings.limits.total) - (time.monotonic() - start) - wait
            left = min(limits.total, budget)
            if left < min(limits.total, MIN_RETRY_S):
                break
            # a 429 that says when to come back (a proxy's cooldown, a full queue) is not a verdict about the
            # request: it is waited out and sent again while T allows, and the report says so. The burst's 429s
            # are its point (they are sent with hold, never retried).
            time.sleep(wait)
            tries, waited = tries + 1, waited + wait
            ex = self._record(req, replace(limits, total=left))
        if tries:
            times = "once" if tries == 1 else f"{tries} times"
            ex = replace(ex, observations=ex.observations.with_(
                retried=f"429 with Retry-After: waited {waited:g} s and sent again {times}"))
        if (ex.observations.aborted in LOST and req.hold is None and req.retry_lost) or self._cut_short(req, ex):
            ex = self._resend_alone(req, limits, start, ex)
        return ex

    def _resend_alone(self, req: Request, limits: Limits, start: float, lost: Exchange,
                      sender: Callable[[Request, Limits], Exchange] | None = None) -> Exchange:
        """A connection lost mid-exchange (reset, closed before the body ended, refused) is not judged as it is: it
        may be the suite's concurrency the server did not cope with, or a loss a fresh connection does not show.
        The request is sent once more on a fresh connection with no other request of the run in flight, within
        the same time limit T, and the report says so; a loss that happens again alone is judged."""
        left = limits.total - (time.monotonic() - start)
        if left < min(limits.total, MIN_RETRY_S):
            return lost
        with self.gate.alone(timeout=left) as got:
            left = limits.total - (time.monotonic() - start)
            if not got or left < min(limits.total, MIN_RETRY_S):
                return lost
            again = (sender or (lambda r, lim: self._record(r, lim, alone=True)))(req, replace(limits, total=left))
        if lost.observations.aborted is None:
            why = "the stream ended before any choice finished"
        else:
            why = f"the connection was lost ({lost.observations.aborted}" + (
                f": {lost.observations.error}" if lost.observations.error else "") + ")"
        return replace(again, observations=again.observations.with_(
            retried=f"{why[:180]}; sent again alone on a fresh connection"))

    def _record(self, req: Request, limits: Limits, alone: bool = False) -> Exchange:
        if not alone:
            with self.gate.shared():
                return self._record(req, limits, alone=True)
        left = self.deadline - time.monotonic()
        if limits.total > left:  # the run's bound clips every request; what it cuts is not the server's
            limits = replace(limits, total=max(left, 0.001), total_name=RUN_TIMEOUT)
        return record(self.base_url, req, limits, self.settings.api_key, self.settings.secrets)

    def past_deadline(self) -> bool:
        return time.monotonic() >= self.deadline or self.stopped is not None

    def _count_silence(self, ex: Exchange) -> None:
        """A server that stops answering (a silent accept, a slowloris) ends the run after SILENT_IN_A_ROW requests
        in a row without a response, each at its own time limit, not after every scenario has waited out T."""
        with self._lock:
            if ex.status is not None:
                self.silent = 0
            elif ex.observations.aborted in NO_RESPONSE:
                self.silent += 1
                if self.silent >= SILENT_IN_A_ROW and self.stopped is None:
                    self.stopped = (f"{STOPPED}: {self.silent} requests in a row got no response within their "
                                    f"time limits (the last: {ex.observations.aborted})")

    def wait_for_server(self, seconds: float) -> None:
        """--wait: ask GET /v1/models every half second until anything answers (any status: the server is up) or
        the time is spent; discovery then says what it finds."""
        end = time.monotonic() + seconds
        probe = replace(self.settings.limits, total=min(5.0, seconds), first_byte=min(5.0, seconds), max_bytes=65536)
        while True:
            ex = self._record(Request(method="GET", path="/v1/models", scenario="wait"), probe)
            left = end - time.monotonic()
            if ex.status is not None or left <= 0:
                return
            time.sleep(min(0.5, left))

    def discover(self) -> str:
        """The model to use: --model, else the first id GET /v1/models lists. Raises ``Unreachable``."""
        limits = self.settings.limits
        ex = self.send(Request(method="GET", path="/v1/models"), replace(limits, total=min(30.0, limits.total)))
        if ex.status is None:
            raise Unreachable(f"{self.base_url} did not answer: {ex.observations.error or 'no response'}")
        self.refuse_if_unauthorized(ex, "GET /v1/models")
        try:
            listed: Any = json.loads(ex.body)
        except ValueError:
            listed = None
        entries = listed.get("data") if isinstance(listed, dict) else None
        if isinstance(entries, list):
            self.listed = [str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e]
        if not self.model and ex.observations.aborted is not None:
            cut = (f"more than the byte cap of {limits.max_bytes:,} bytes" if ex.observations.aborted == "byte cap"
                   else f"cut short ({ex.observations.aborted})")
            raise ConfigError(f"{self.base_url}/v1/models answered {ex.status} with a model list {cut}, so no model "
                              "could be chosen from it; pass --model")
        if not self.model:
            try:
                ids = [str(entry["id"]) for entry in listed.get("data") or []]
                self.model = next((i for i in ids if not NOT_CHAT.search(i)), ids[0])
            except (AttributeError, IndexError, KeyError, TypeError):
                raise ConfigError(f"{self.base_url}/v1/models answered {ex.status} without a model id; "
                                  "pass --model") from None
        self.context = context_tokens(listed, self.model) or self._health_context()
        return self.model

    def _health_context(self) -> int | None:
        """The context length a seed-001 style ``/health`` states (``max_context``), if the server has one."""
        return context_tokens(self._health("discover/health"), self.model)

    def _health(self, scenario: str) -> Any:
        """``GET /health`` as JSON (None without a 200 JSON answer), under every request's limits with a short
        total and a small byte cap: a server that dribbles it cannot hold the run."""
        probe = replace(self.settings.limits, total=min(2.0, self.settings.limits.total), max_bytes=64 * 1024)
        ex = self.send(Request(method="GET", path="/health", scenario=scenario), probe)
        if ex.status != 200 or ex.observations.aborted:
            return None
        try:
            return json.loads(ex.body)
        except ValueError:
            return None

    def refuse_if_unauthorized(self, ex: Exchange, what: str) -> None:
        """A 401 or 403 ends the run at once, in one sentence: every scenario after it would only be skipped."""
        if ex.status not in (401, 403):
            return
        sent = ("the key that was sent was refused" if self.settings.api_key else
                "no key was sent: pass --api-key or set OPENAI_API_KEY")
        raise ConfigError(f"{self.base_url}: {what} answered {ex.status}; {sent}")

    def refuse_if_model_missing(self, ex: Exchange, scenario: str) -> None:
        """A --model the server does not serve (a typo) ends the run at once, in one sentence, before the scenarios:
        every rule would fail or pass for a reason that has nothing to do with the server. Shown by the first valid
        chat request answering 404, or a 4xx while the model list is there and does not name the model."""
        if not self.settings.model or ex.status is None or not 400 <= ex.status < 500 or ex.status == 429:
            return
        if ex.intent in BAD_INPUT or not isinstance(ex.request, dict) or ex.request.get("model") != self.model:
            return
        unlisted = bool(self.listed) and self.model not in (self.listed or ())
        if ex.status != 404 and not unlisted:
            return
        error = _error_text(ex)
        ids = self.listed or []
        listed = ("; the server lists: " + ", ".join(repr(i) for i in ids[:5])
                  + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")) if ids else ""
        raise ConfigError(f"the model {self.model!r} is not served: the first request ({scenario}) answered "
                          f"{ex.status}{': ' + error if error else ''}{listed}; check --model")

    # -- scenario kinds --------------------------------------------------------------------

    def run_scenario(self, sc: Scenario) -> Outcome | None:
        """The scenario's outcome; None when the run timeout left it out or cut it (``not_run`` says so)."""
        if self.past_deadline():
            with self._lock:
                self.not_run.append(sc.name)
            return None
        ctx = Context(model=self.model, profile=self.settings.profile, context_tokens=self.context)
        req = sc.build(ctx)
        req.scenario = sc.name
        self.emit(ev.ScenarioStarted(sc.name, sc.category))
        start = time.monotonic()
        kind = {"followup": self._followup, "disconnect": self._disconnect, "cancel": self._cancel,
                "http10": self._http10, "burst": self._burst, "repeat": self._repeat, "stop-compare": self._stop_compare,
                "clock": self._clock,
                "cancel-completed": self._cancel_completed}.get(sc.kind, self._plain)
        exchanges = kind(req)
        elapsed = time.monotonic() - start
        cut = any(ex.observations.aborted == RUN_TIMEOUT for ex in exchanges)
        for ex in exchanges:
            self.emit(ev.ExchangeRecorded(sc.name, ex))
        with self._lock:
            self.done += 1
            done = self.done
            if cut:
                self.not_run.append(sc.name)
        first = exchanges[0]
        if sc.name == "stream-plain" and first.status == 200:
            self.plain_first_event = first_output_s(first)
        self.emit(ev.ScenarioFinished(sc.name, sc.category, first.status, round(elapsed, 3),
                                      (self.stop_label if self.stopped else RUN_TIMEOUT) if cut
                                      else first.observations.aborted, done, max(self.total, done)))
        if cut:
            return None
        outcome = Outcome(sc, exchanges, self.reproducer(sc, req), elapsed)
        with self._lock:
            self.recorded.append(outcome)
        if self.settings.exitfirst:
            self._stop_at_failure(outcome)
        return outcome

    def _stop_at_failure(self, outcome: Outcome) -> None:
        """-x: judge the scenario as it ends (against the capabilities probed so far: a scenario whose capability is
        not probed yet is not judged here, the final judging does it); a gating failure stops the run."""
        from conformance.engine.judge import capabilities, judge
        from conformance.model import Level, gating_levels

        with self._lock:
            caps = capabilities(list(self.recorded), self.settings.expect)
        gating = gating_levels(self.settings.strict)
        known = set(self.settings.known_failures)
        for entry in judge(outcome, caps, self.settings, self.settings.rules):
            if entry.outcome in ("failed", "error") and Level(entry.level) in gating \
                    and (entry.rule, entry.scenario) not in known:
                with self._lock:
                    if self.stopped is None:
                        self.stop_label = "stopped at the first failure (-x)"
                        self.stopped = f"stopped at the first failure (-x): {entry.rule} [{entry.level}] in {entry.scenario}"
                return

    def reproducer(self, sc: Scenario, req: Request) -> str:
        """What the suite did, as a script; a body over 2 KiB is written beside the reports, gzipped (the
        oversized one is 16 MiB of one letter), and the script unpacks it."""
        body = req.encoded()
        body_file = None
        if body is not None and len(body) > MAX_INLINE_BODY and self.settings.report_dir is not None:
            path = self.settings.report_dir / "reproducers" / f"{sc.name}.json.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(gzip.compress(body, 6, mtime=0))
            body_file = str(path)
        followup = chat(Context(self.model), HELLO, stream=False, max_tokens=8) if sc.kind == "followup" else None
        return scenario_script(sc.kind, self.base_url, req, self.settings.api_key, body_file, followup, BURST)

    def _plain(self, req: Request) -> list[Exchange]:
        return [self.send(req)]

    def _liveness(self) -> int | None:
        ex = self.send(chat(Context(self.model), HELLO, stream=False, max_tokens=8),
                       replace(self.settings.limits, total=min(60.0, self.settings.limits.total)))
        return ex.status

    def _followup(self, req: Request) -> list[Exchange]:
        ex = self.send(req)
        return [replace(ex, observations=ex.observations.with_(followup=Followup(self._liveness())))]

    def _first_byte(self, req: Request) -> float | None:
        """Seconds to the first event that shows the generation under way (a role-only chunk does not)."""
        ex = self.send(replace(req, stop_after_events=1, counts=answers_for(req.path)))
        return ex.arrivals[-1][0] if ex.arrivals and ex.observations.disconnected_after_events else None

    def _disconnect(self, req: Request) -> list[Exchange]:
        ctx = Context(self.model)
        before = self._generations()  # with counters the work is read from them; else timed against a baseline
        baseline = self._first_byte(chat(ctx, HELLO, max_tokens=8)) if before is None else None
        other: list[Exchange] = []
        started = threading.Event()
        other_req = replace(chat(ctx, LONG, max_tokens=24), scenario=f"{req.scenario}/other", retry_lost=False,
                            first_event=started)
        thread = threading.Thread(target=lambda: other.append(self.send(other_req)))
        thread.start()
        # the other client's stream is under way before this one comes (and leaves): whatever the server does to a
        # running stream when another request arrives shows on every run, not only when the timing falls so
        started.wait(self.settings.limits.first_byte)
        ex = self.send(replace(req, stop_after_events=1, counts=answers_for(req.path)))  # left once the generation is under way
        obs: dict[str, Any] = {"baseline_ttfb_s": baseline}
        thread.join(self.settings.limits.total + 5)  # the other stream ends first: a one-slot server runs it
        running = self._running_after()
        after = self._generations()
        if running is not None:
            obs.update(running_after=running, signal="/health generations.running")
            if before and after and "cancelled" in before and "cancelled" in after:
                obs["cancelled_delta"] = int(after["cancelled"]) - int(before["cancelled"])
        else:
            obs["followup_ttfb_s"] = self._first_byte(chat(ctx, HELLO, max_tokens=8))
        if other:
            done = analyze(other[0], self.settings.profile)
            choices = done.assembled.choices.values()
            finished = done.assembled.done or (bool(choices) and all(c.finish_reason for c in choices))
            obs["other_stream_done"] = other[0].status == 200 and finished and done.assembled.error is None \
                and other[0].observations.aborted is None  # a missing [DONE] alone is SSE-002's, not this rule's
        return [replace(ex, observations=ex.observations.with_(disconnect=Disconnect(**obs))), *other]

    def _generations(self) -> dict[str, Any] | None:
        """The server's generation counters (the reference server's /health), if it exposes them."""
        doc = self._health("disconnect/health")
        counters = doc.get("generations") if isinstance(doc, dict) else None
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
        first.wait(self.settings.limits.first_byte)
        call = self.send(Request(path=cancel_path(req.headers.get("X-Request-ID", "")), body={}, intent=Intent.CANCEL,
                                 scenario="cancel-endpoint/call"))
        thread.join(self.settings.limits.total + 5)
        return (result or []) + [call]

    def _repeat(self, req: Request) -> list[Exchange]:
        """The same request twice: the second continues the retained history exactly (seed 001 prompt reuse)."""
        first = self.send(req)
        return [first, self.send(replace(req, intent=Intent.PROMPT_REUSE))]

    def _clock(self, req: Request) -> list[Exchange]:
        """A stream long enough in time to span a second of the server's clock: a first stream of the scenario's
        max_tokens shows the server's speed, the second asks for enough tokens to last about 1.3 s (at most
        CLOCK_MAX_TOKENS, and within a stated context). The second is the scenario's exchange."""
        first = self.send(replace(req, scenario=f"{req.scenario}/probe"))
        asked = int((req.body or {}).get("max_tokens") or 48)
        wanted = asked
        arrivals = first.arrivals
        span = arrivals[-1][0] - arrivals[0][0] if first.status == 200 and len(arrivals) >= 2 else None
        if span is not None and span < CLOCK_SPAN_S:
            wanted = int(asked * CLOCK_SPAN_S / max(span, 0.001)) + 1
        cap = CLOCK_MAX_TOKENS if self.context is None else min(CLOCK_MAX_TOKENS, max(asked, self.context // 2))
        wanted = max(asked, min(wanted, cap))
        return [self.send(replace(req, body={**(req.body or {}), "max_tokens": wanted})), first]

    def _stop_compare(self, req: Request) -> list[Exchange]:
        """The request without its stop sequences first, then with them (both at temperature 0): the stopped
        answer must be the unstopped one cut before the first sequence (FIN-011), not more."""
        body = {k: v for k, v in (req.body or {}).items() if k != "stop"}
        first = self.send(replace(req, body=body, scenario=f"{req.scenario}/unstopped"))
        stopped = self.send(req)
        content = None
        if first.status == 200:
            choices = analyze(first, self.settings.profile).assembled.choices
            content = choices[min(choices)].content[:4096] if choices else None
        if content is None:
            return [stopped, first]
        return [replace(stopped, observations=stopped.observations.with_(unstopped=content)), first]

    def _cancel_completed(self, req: Request) -> list[Exchange]:
        """A short stream with an X-Request-ID, then, once it has ended, the cancel call for that id and for the
        stream's chatcmpl id: neither is a registered stream any more (seed 000: 404, cancelled: false)."""
        ex = self.send(req)
        rid = req.headers.get("X-Request-ID", "")
        calls = [self.send(Request(path=cancel_path(rid), body={}, intent=Intent.CANCEL_COMPLETED,
                                   scenario=f"{req.scenario}/call"))]
        chunks = analyze(ex, self.settings.profile).chunks if ex.status == 200 else []
        stream_id = chunks[0].value.get("id") if chunks and isinstance(chunks[0].value, dict) else None
        if isinstance(stream_id, str) and stream_id and stream_id != rid:
            # the server's id goes into the path as one percent-encoded segment: whatever it holds (../, ?, #, %2F,
            # controls) it names this stream, never another path of the server; one that cannot be a segment
            # (a dot segment, a lone surrogate) is not sent, and the exchange says why
            if segment_of(stream_id) is None:
                ex = replace(ex, observations=ex.observations.with_(
                    not_sent=f"the cancel call for the stream's id {stream_id!r}: it cannot be one path segment"))
            else:
                calls.append(self.send(Request(path=cancel_path(stream_id), body={}, intent=Intent.CANCEL_COMPLETED,
                                               scenario=f"{req.scenario}/chatcmpl")))
        return [ex, *calls]

    def _send_signalling(self, req: Request, first: threading.Event) -> Exchange:
        req = replace(req, first_event=first)
        return self.send(req)

    def _burst(self, req: Request) -> list[Exchange]:
        """Many streams at once, each left after its first event. Each request has the queue wait to start or
        be refused; one still waiting then is queued (ERR-018), and the burst ends: nothing is waited out.
        The refused ones are what it shows (ERR-014), else one that started."""
        wait = queue_wait(self.settings.timeout, self.plain_first_event)
        limits = replace(self.settings.limits, first_byte=min(self.settings.limits.first_byte, wait),
                         idle=min(self.settings.limits.idle, wait), total=min(self.settings.limits.total, wait + 5))
        arrived, release, abandon, refusal = (threading.Semaphore(0), threading.Event(), threading.Event(),
                                              threading.Event())
        held = replace(req, stop_after_events=1, arrived=arrived, hold=release, counts=answers_for(req.path),
                       abandon=abandon)
        begin = time.monotonic()

        def one(_: int) -> Exchange:
            ex = self.send(held, limits)
            if ex.status is not None and ex.status >= 400:
                refusal.set()
            if ex.observations.disconnected_after_events is None:
                arrived.release()  # refused, ended or given up on without holding a stream
            return ex

        with ThreadPoolExecutor(max_workers=BURST) as pool:
            futures = [pool.submit(one, i) for i in range(BURST)]
            deadline, grace_end, seen = begin + wait + 1, None, 0  # one wait for all, not one each
            while seen < BURST:  # every request is answered, held or given up on, then all let go
                now = time.monotonic()
                if refusal.is_set() and grace_end is None:
                    grace_end = now + REFUSAL_GRACE  # a refusal shows the queue's bound: the rest come together
                end = deadline if grace_end is None else min(deadline, grace_end)
                if now >= end:
                    break
                if arrived.acquire(timeout=min(end - now, 0.1)):
                    seen += 1
            release.set()
            abandon.set()
            exchanges = [_queued(f.result()) for f in futures]
        started = [ex for ex in exchanges if ex.observations.disconnected_after_events is not None]
        refused = [ex for ex in exchanges if ex.status is not None and ex.status >= 400]
        queued = len(exchanges) - len(started) - len(refused)
        counts = Burst(sent=BURST, started=len(started), refused=len(refused), queued=queued, wait_s=round(wait, 3))
        shown = [ex for ex in refused if ex.status == 429][:2] or (started or refused or exchanges)[:1]
        time.sleep(0.5)  # let the server notice the disconnects before the next scenario
        first = shown[0]
        return [replace(first, observations=first.observations.with_(burst=counts)), *shown[1:]]

    def _http10(self, req: Request) -> list[Exchange]:
        req = self._with_headers(req)
        start = time.monotonic()
        with self.gate.shared():
            ex = record_http10(self.base_url, req, self.settings.limits, self.settings.api_key, self.settings.secrets)
        if self._cut_short(req, ex):
            ex = self._resend_alone(req, self.settings.limits, start, ex,
                                    lambda r, lim: record_http10(self.base_url, r, lim, self.settings.api_key,
                                                                 self.settings.secrets))
        return [ex]

    def _cut_short(self, req: Request, ex: Exchange) -> bool:
        """A stream that ended, with no error, before any choice finished (nothing cut it on the suite's side):
        what a server does to one stream when another request comes (llama-cpp-python's interrupt_requests)."""
        if not req.retry_lost or req.hold is not None or req.stop_after_events is not None or ex.status != 200 \
                or req.intent == Intent.CANCELLED_STREAM:  # a stream the cancel endpoint stops may end so
            return False
        if ex.observations.aborted is not None or not (ex.header("content-type") or "").startswith("text/event-stream"):
            return False
        a = analyze(ex, self.settings.profile)
        return a.protocol is not None and not a.protocol.finished(a)

    # -- the live phase ----------------------------------------------------------------

    def record_all(self, chosen: list[Scenario]) -> list[Outcome]:
        """Run ``chosen`` (capability probes included by the caller) and return every outcome, in run order."""
        from conformance.engine.judge import capabilities

        ordered = [sc for sc in chosen if sc.kind not in ALONE and sc.name not in HEAVY]
        self.total = len(chosen)
        first = self.run_scenario(ordered[0]) if ordered else None  # alone: a 401 ends the run here
        outcomes = [first] if first is not None else []
        if first is not None:
            self.refuse_if_unauthorized(first.exchanges[0], f"the first request ({ordered[0].name})")
            self.refuse_if_model_missing(first.exchanges[0], ordered[0].name)
        with ThreadPoolExecutor(max_workers=max(1, self.settings.workers)) as pool:
            outcomes += [o for o in pool.map(self.run_scenario, ordered[1:]) if o is not None]
        caps = capabilities(outcomes, self.settings.expect)
        alone = [sc for sc in chosen if sc.kind in ALONE and (sc.needs is None or caps[sc.needs]["supported"]
                                                               or sc.needs in self.settings.expect)]
        heavy = [sc for sc in chosen if sc.name in HEAVY]
        self.total = len(ordered) + len(alone) + len(heavy)
        for sc in alone + heavy:
            outcome = self.run_scenario(sc)
            if outcome is not None:
                outcomes.append(outcome)
        return outcomes


RETRY_AFTER_CAP_S = 10.0  # a longer wait is not waited out: the 429 stands
MIN_RETRY_S = 5.0  # what must be left of the request's time limit after the wait to send it again


def retry_after(ex: Exchange) -> float | None:
    """The seconds a 429 asks the client to wait (Retry-After in seconds, RFC 9110 §10.2.3), if at most the cap."""
    if ex.status != 429:
        return None
    value = (ex.header("retry-after") or "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds <= RETRY_AFTER_CAP_S else None


def _error_text(ex: Exchange) -> str:
    """The message of an error body, short (a string error, or error.message)."""
    try:
        doc = json.loads(ex.body)
    except ValueError:
        return ""
    error = doc.get("error") if isinstance(doc, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return str(message)[:160] if isinstance(message, (str, int)) else ""


def _queued(ex: Exchange) -> Exchange:
    """A burst request the suite gave up on after its queue wait: the limit was the suite's, not a time limit
    the server broke, so it is named for what it was (ERR-018 judges it; TRN-010 and TRN-014 do not)."""
    if ex.observations.aborted in ("first-byte timeout", "idle timeout", "total timeout"):
        return replace(ex, observations=ex.observations.with_(aborted=ABANDONED))
    return ex


def first_output_s(ex: Exchange) -> float | None:
    """When the first event that shows the generation under way arrived (None: no such event)."""
    try:
        events = SSEDecoder().feed(ex.body[:256 * 1024])
    except WireError:
        return None
    answers = answers_for(ex.path)
    end = next((e.end for e in events if answers(e.data)), None)
    if end is None:
        return None
    return next((t for t, total in ex.arrivals if total >= end), None)

