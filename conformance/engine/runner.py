"""The choreography of a live run: each scenario kind's requests against the target, recorded.

Order: the model is discovered, then the independent scenarios run concurrently (``workers``),
then those that measure the server alone (disconnects, the cancel endpoint), then the heavy error
scenarios (a prompt beyond the context, an oversized body), each followed by a liveness request.
Each scenario is sent (``send_scenario``), then its outcome is made (``finish``: its reproducer, its exchanges
judged, its wire log files written), which sends nothing: so the first scenario's outcome is made while the
concurrent ones send, and each one-at-a-time scenario's while the next one sends (with -x, before it).
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
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from conformance.capabilities import CAPABILITY_SCENARIOS, ROUTE_CAPABILITIES, UNSERVED
from conformance.engine import discovery
from conformance.engine import events as ev
from conformance.engine.client import record
from conformance.engine.kinds import Script, kind_of
from conformance.engine.outcome import Outcome as Outcome
from conformance.engine.outcome import Sent, first_output_s
from conformance.engine.repro import MAX_INLINE_BODY
from conformance.errors import ConfigError, Unreachable
from conformance.exchange import Exchange, analyze
from conformance.model import BAD_INPUT, Intent
from conformance.model.limits import ANSWER_DEADLINE, REFUSAL_DEADLINE, SIZE_ABORTS, Limits
from conformance.model.observations import Observations
from conformance.model.profiles import PROFILES
from conformance.model.request import Request
from conformance.model.scenario import Context, Scenario, context_tokens
from conformance.protocols import REGISTRY, by_name
from conformance.scenarios import route_needed
from conformance.settings import Settings
from conformance.wire.body import HOLD_BYTES, held
from conformance.wire.untrusted import one_line

if TYPE_CHECKING:
    from conformance.engine.wirelog import Ahead

# the heavy error scenarios, one at a time after the rest, in this order: the oversized body first, so a server still
# tokenizing the over-context prompt (the overflow's work goes on after the suite leaves) does not delay its answer
HEAVY_ORDER = ("error-oversized", "error-context-overflow")
HEAVY = frozenset(HEAVY_ORDER)
LOST = frozenset({"protocol error", "transport error", "connect error"})  # the connection failed, not a limit
BUSY = frozenset({REFUSAL_DEADLINE, ANSWER_DEADLINE, "send timeout"})  # limits the run's own load can make a server miss
RUN_TIMEOUT = "run timeout"
STOPPED = "the server stopped answering"  # why the remaining scenarios were cut (Runner.silent)
SILENT_IN_A_ROW = 3  # requests in a row with no response within their limits: the server has stopped answering
CUT = "the server's answers ran to the suite's limits"  # why the remaining scenarios were cut (Runner.limited)
LIMITED_IN_A_ROW = 3  # requests in a row whose answer was cut at a limit (time or size): the rest would be too
SIZE_LIMITS = frozenset(SIZE_ABORTS)
NO_RESPONSE = frozenset({"first-byte timeout", "idle timeout", "total timeout", REFUSAL_DEADLINE, ANSWER_DEADLINE,
                         "send timeout", "connect timeout"})
# seed 003 §6: servers list embedding, reranking, speech and image models beside chat ones; no field tells them
# apart, the practical filter is the name. Discovery takes the first id that does not look like one.
ROUTE_PROBES = frozenset(CAPABILITY_SCENARIOS[c] for c in ROUTE_CAPABILITIES)  # the scenarios each protocol route's
# answer shows served or not: sent first, together
NOT_CHAT = re.compile(r"embed|rerank|bge|clip|whisper|tts|asr|speech|audio|image|flux|sdxl|diffusion", re.IGNORECASE)


def chat_model(ids: list[str]) -> str:
    """The first listed id that does not look like an embedding, reranking, speech or image model, else the first."""
    return next((i for i in ids if not NOT_CHAT.search(i)), ids[0])


Emit = Callable[[ev.Event], None]


class Gate:
    """Requests run shared; a resend after a lost connection runs alone (no other request of the run in flight).
    A waiting resend holds new requests back, so it is not starved; it waits at most its time limit."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting = 0
        self._in: dict[int, bool] = {}  # the threads with a shared request in flight: whether another one overlapped
        self._overlapped: dict[int, bool] = {}  # each thread's last shared request: whether another overlapped it

    @contextmanager
    def shared(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            while self._writer or self._waiting:
                self._cond.wait()
            self._readers += 1
            for other in self._in:
                self._in[other] = True
            self._in[me] = bool(self._in)
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._overlapped[me] = self._in.pop(me, False)
                self._cond.notify_all()

    def overlapped(self) -> bool:
        """Whether another request of the run was in flight during this thread's last shared request."""
        with self._cond:
            return self._overlapped.get(threading.get_ident(), False)

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
        self.limited = 0  # requests in a row whose answer (response or not) was cut at a time or size limit
        self.stopped: str | None = None  # why the rest of the run is cut: the server stopped answering, or -x
        self.stop_label = STOPPED  # how a cut scenario is labelled on its progress line
        self.recorded: list[Outcome] = []  # the outcomes so far (-x judges each against them)
        self.context: int | None = None  # the context length the server states, in tokens
        self.plain_first_event: float | None = None
        self.listed: list[str] | None = None  # the model ids GET /v1/models listed (None: no list)
        self.ahead: Ahead | None = None  # writes each exchange's wire log files as its scenario ends (engine.run)
        self.unsent: dict[str, str] = {}  # scenarios not sent, their route not served (``unserved``): why
        self.routes: dict[str, Exchange] = {}  # each route's probe (the run's first requests): its first exchange
        self.model_list: Exchange | None = None  # what GET /v1/models answered
        self.list_problems: list[tuple[Exchange, str]] = []  # the model lists asked for that were none, and how
        served = "unknown-model-served" in PROFILES[settings.profile].allows
        self.refuse = BAD_INPUT - {Intent.UNKNOWN_MODEL} if served else BAD_INPUT  # requests under the refusal deadline

    def close(self) -> None:
        """Nothing to release: every request has a connection of its own."""

    # -- requests --------------------------------------------------------------------------

    def with_headers(self, req: Request) -> Request:
        """-H: on every request, the scenario's own headers winning."""
        return replace(req, headers={**dict(self.settings.headers), **req.headers}) if self.settings.headers else req

    def send(self, req: Request, limits: Limits | None = None) -> Exchange:
        req = self.with_headers(req)
        if limits is None:
            limits = (self.settings.refusal if req.intent in self.refuse else
                      self.settings.answering if req.intent == Intent.OVERSIZED else self.settings.limits)
        if self.stopped is not None:  # the server has stopped answering: nothing more is sent, the scenario is cut
            return Exchange(request=req.body, body=b"", status=None, headers=(), method=req.method, path=req.path,
                            intent=req.intent, scenario=req.scenario,
                            observations=Observations(aborted=RUN_TIMEOUT, error=self.stopped))
        start = time.monotonic()
        ex = self._record(req, limits)
        if req.abandon is None and req.hold is None:  # a burst's queued requests are left by design, not by a limit
            self._count_silence(ex)
        tries, waited = 0, 0.0
        unsaid = False  # a 429 that did not say when to come back: backed off as the SDKs do
        while (wait := retry_after(ex, tries)) is not None and req.hold is None:
            unsaid = unsaid or ex.header("retry-after") is None
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
                retried=f"429 {'without Retry-After (backed off as the SDKs do)' if unsaid else 'with Retry-After'}: "
                        f"waited {waited:g} s and sent again {times}"))
        if (ex.observations.aborted in LOST and req.hold is None and req.retry_lost) or self.cut_short(req, ex) \
                or (ex.observations.aborted in BUSY and req.hold is None and self.gate.overlapped()):
            # a refusal deadline missed, or a request body the server stopped reading, while the suite's other
            # workers kept the server busy is not the server's verdict (issue 27: mlx-omni-server refuses in 11 ms
            # alone, and reads a 16 MiB body; a server that generates on its event loop reads nothing meanwhile): it
            # is timed again with nothing else in flight. Only if another request was in flight: a heavy scenario,
            # which runs alone, is not sent twice (issue 44: the over-context prompt took its deadline twice)
            ex = self.resend_alone(req, limits, start, ex)
        return ex

    def resend_alone(self, req: Request, limits: Limits, start: float, lost: Exchange,
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
        elif lost.observations.aborted == REFUSAL_DEADLINE:
            why = "no refusal within the refusal deadline while other requests of the run were in flight"
        elif lost.observations.aborted == ANSWER_DEADLINE:
            why = "no answer within the answer deadline while other requests of the run were in flight"
        elif lost.observations.aborted == "send timeout":
            why = "the server stopped reading the request body while other requests of the run were in flight"
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

    def recorded_so_far(self) -> list[Outcome]:
        """The outcomes made so far (an interrupted run judges these)."""
        with self._lock:
            return list(self.recorded)

    def past_deadline(self) -> bool:
        return time.monotonic() >= self.deadline or self.stopped is not None

    def _count_silence(self, ex: Exchange) -> None:
        """A server that stops answering (a silent accept, a slowloris) ends the run after SILENT_IN_A_ROW requests
        in a row without a response, each at its own time limit, not after every scenario has waited out T."""
        aborted = ex.observations.aborted
        with self._lock:
            if ex.status is not None:
                self.silent = 0
            elif aborted in NO_RESPONSE:
                self.silent += 1
                if self.silent >= SILENT_IN_A_ROW and self.stopped is None:
                    self.stopped = (f"{STOPPED}: {self.silent} requests in a row got no response within their "
                                    f"time limits (the last: {aborted})")
            # a server that answers but never ends an answer within the limits (a byte every 50 ms, a flood of
            # every answer) would have every scenario waited out to T or read to the byte cap: after
            # LIMITED_IN_A_ROW in a row, nothing more is sent either (issue 44). The liveness follow-up of a refusal
            # cut at its deadline answers and ends the streak: a server that works on bad input is judged whole.
            if aborted in NO_RESPONSE or aborted in SIZE_LIMITS:
                self.limited += 1
                if self.limited >= LIMITED_IN_A_ROW and self.stopped is None:
                    self.stop_label = CUT
                    self.stopped = (f"{CUT}: {self.limited} requests in a row were cut at a limit (the last: "
                                    f"{aborted}" + (f" after {ex.observations.elapsed_s:.1f} s" if
                                                    ex.observations.elapsed_s is not None else "") + ")")
            else:
                self.limited = 0

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

    def discover(self, protocols: tuple[str, ...] = REGISTRY) -> str:
        """The model to use: --model, else the first id the model list lists: ``GET /v1/models`` (OpenAI's and
        Anthropic's APIs, and most servers of any protocol), else, with no --model and a protocol of the run that lists
        its models elsewhere, there (Ollama's ``GET /api/tags``). Raises ``Unreachable``, and ``ConfigError`` in one
        sentence that names the base URL when, with no --model, no answer is a model list (a 404, a redirect, a 5xx,
        an HTML page: ``discovery.url_problem``)."""
        paths = list(dict.fromkeys(["/v1/models", *(by_name(p).models_path for p in protocols)]))
        tried: list[tuple[Exchange, str]] = []
        for path in paths:
            ex = self._model_list(path)
            self.model_list = self.model_list or ex
            problem = discovery.model_list_problem(ex)
            if problem is None:
                self.model_list, self.listed = ex, discovery.listed_ids(ex)
                break
            tried.append((ex, problem))
            if self.model or ex.observations.aborted is not None:  # (one list is enough to read the context from)
                break
        self.list_problems = tried
        if not self.model:
            if self.listed is None:
                raise ConfigError(discovery.url_problem(self.base_url, tried))
            if not self.listed:
                raise ConfigError(f"{self.base_url}{self.model_list.path if self.model_list else ''} lists no model "
                                  "(no id in it); pass --model")
            self.model = chat_model(self.listed)
        try:
            listed: Any = json.loads(held(self.model_list.body)) if self.model_list is not None else None
        except ValueError:
            listed = None
        self.context = context_tokens(listed, self.model) or self._health_context()
        return self.model

    def _model_list(self, path: str) -> Exchange:
        """One model list asked for: a 401/403, no answer, or (with no --model) a list cut short end the run."""
        # a model list is kilobytes: its cap is the body held in memory (2 MiB), not the cap of a long answer
        limits = replace(self.settings.limits, total=min(30.0, self.settings.limits.total),
                         max_bytes=min(self.settings.limits.max_bytes, HOLD_BYTES))
        ex = self.send(Request(method="GET", path=path), limits)
        if ex.status is None:
            why = ex.observations.error or (f"no response within {limits.total:g} s ({ex.observations.aborted})"
                                           if ex.observations.aborted in NO_RESPONSE else "no response")
            raise Unreachable(f"{self.base_url} did not answer: {why}")
        self.refuse_if_unauthorized(ex, f"GET {path}")
        if not self.model and ex.observations.aborted is not None:
            cut = (f"more than the byte cap of {limits.max_bytes:,} bytes" if ex.observations.aborted == "byte cap"
                   else f"cut short ({ex.observations.aborted})")
            raise ConfigError(f"{self.base_url}{path} answered {ex.status} with a model list {cut}, so no model "
                              "could be chosen from it; pass --model")
        return ex

    def _health_context(self) -> int | None:
        """The context length a seed-001 style ``/health`` states (``max_context``), if the server has one."""
        return context_tokens(self.health("discover/health"), self.model)

    def health(self, scenario: str) -> Any:
        """``GET /health`` as JSON (None without a 200 JSON answer), under every request's limits with a short
        total and a small byte cap: a server that dribbles it cannot hold the run."""
        probe = replace(self.settings.limits, total=min(2.0, self.settings.limits.total), max_bytes=64 * 1024)
        ex = self.send(Request(method="GET", path="/health", scenario=scenario), probe)
        if ex.status != 200 or ex.observations.aborted:
            return None
        try:
            return json.loads(held(ex.body))
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
        every rule would fail or pass for a reason that has nothing to do with the server. The refusal is read before
        the model is blamed: a 4xx (not 429) of a valid request that names the model (its code or its message), or
        any 4xx while the server lists models and not this one. A route's 404 that names no model is a route the
        server does not serve (``unserved``), never a wrong model."""
        if not self.settings.model or ex.status is None or not 400 <= ex.status < 500 or ex.status == 429:
            return
        if ex.intent in BAD_INPUT or not isinstance(ex.request, dict) or ex.request.get("model") != self.model:
            return
        unlisted = bool(self.listed) and self.model not in (self.listed or ())
        if not unlisted and not self.model_refused(ex):
            return
        ids = self.listed or []
        listed = ("; the server lists: " + ", ".join(repr(one_line(i[:80])) for i in ids[:5])
                  + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")) if ids else ""
        raise ConfigError(f"the model {self.model!r} is not served: {scenario} ({ex.method} {ex.path}) answered "
                          f"{ex.status}: {discovery.error_text(ex)}{listed}; check --model")

    def model_refused(self, ex: Exchange) -> bool:
        """Whether a refusal is about the model: never where the server lists the model (a proxy's 404 for a route
        its backend lacks names the model group: LiteLLM's "model group 'X' failed ... Not Found"); else where its
        code or message names the model (``discovery.names_model``)."""
        if self.listed and self.model in self.listed:
            return False
        return discovery.names_model(ex, self.model)

    def check_routes(self, probes: list[tuple[str, Exchange]]) -> None:
        """After the routes' probes (the run's first requests): a 401/403 ends the run, a model the server does not
        serve ends it, and so does a run of every protocol in which no route is served (every probe answered 404, 405
        or 501 naming no model), in one sentence that names the base URL. A route that is not
        served leaves its scenarios unsent."""
        refused = [(name, ex) for name, ex in probes if ex.status in (401, 403)]
        if refused and all(ex.status in (401, 403) or ex.status in UNSERVED for _, ex in probes):
            # every route that is there refuses the key: nothing would be judged (one route refusing the key another
            # accepts is a finding, the Messages API's x-api-key: the run goes on)
            name, ex = refused[0]
            self.refuse_if_unauthorized(ex, f"the first request ({name}: {ex.method} {ex.path})")
        for name, ex in probes:
            self.refuse_if_model_missing(ex, name)
        every = {p.name for _, ex in probes if (p := ex.protocol) is not None} == set(REGISTRY)
        if every and all(ex.status in UNSERVED and not self.model_refused(ex) for _, ex in probes):
            # no protocol's route: nothing here is an LLM API to judge (a run of some protocols only reports the
            # routes not served as unsupported, their scenarios unsent)
            raise ConfigError(discovery.nothing_served(self.base_url, probes, self.list_problems))

    # -- scenario kinds --------------------------------------------------------------------

    def run_scenario(self, sc: Scenario) -> Outcome | None:
        """The scenario's outcome; None when the run timeout left it out or cut it (``not_run`` says so)."""
        sent = self.send_scenario(sc)
        return self.finish(sent) if sent is not None else None

    def unserved(self, sc: Scenario) -> str | None:
        """Why ``sc`` is not sent: the probe of the route it needs (``route_needed``: its protocol's route, chat's
        included) answered 404, 405 or 501 with a refusal that names no model, so the route is not served (a server
        of one protocol, a proxy whose backend lacks it). Its category's rules would be skipped with the probe's
        evidence anyway; each request to an unserved route costs a proxy a failure (the LiteLLM proxy cools its only
        deployment down on a 404: issue 44). None: send it (no such route, the probe not in this run, or the route
        expected with --expect). The probes are the run's first requests: their answers are in before this asks."""
        route = route_needed(sc)
        if route is None:
            return self._list_unserved(sc) or self._beyond_context(sc)
        if route in self.settings.expect:
            return None
        probe = CAPABILITY_SCENARIOS[route]
        ex = self.routes.get(probe)
        if probe == sc.name or ex is None or ex.status not in UNSERVED or self.model_refused(ex):
            return self._beyond_context(sc)
        return f"not sent: capability {route} unsupported ({probe} answered {ex.status}: the route is not served)"

    def _beyond_context(self, sc: Scenario) -> str | None:
        """Why a scenario is not sent: its prompt is certainly beyond the context the server states (its model list or
        /health): more words than the context has tokens (each word is at least one token in any tokenizer). Its
        refusal would say so, and judge nothing of the request (the agents' corpus on a 4K-context deployment)."""
        if self.context is None:
            return None
        req = sc.build(Context(model=self.model, profile=self.settings.profile, context_tokens=self.context))
        if req.intent == Intent.CONTEXT_OVERFLOW or not isinstance(req.body, (dict, list)):
            return None
        words = _words({k: v for k, v in req.body.items() if k in PROMPT_FIELDS} if isinstance(req.body, dict) else [])
        if words <= self.context:
            return None
        return (f"not sent: its prompt is beyond the server's context (at least {words:,} tokens, one per word; the "
                f"server states {self.context:,})")

    def _routes_probed(self, probes: list[Exchange]) -> ev.RoutesProbed:
        served, unserved = [], []
        for ex in probes:
            name = ex.protocol.name if ex.protocol is not None else ex.path
            if ex.status in UNSERVED and not self.model_refused(ex):
                unserved.append((name, f"{ex.method} {ex.path} answered {ex.status}"))
            else:
                served.append(name)
        return ev.RoutesProbed(tuple(served), tuple(unserved), len(self.unsent), self.total)

    def _list_unserved(self, sc: Scenario) -> str | None:
        """Why a model list's own scenario (``GET /v1/models``) is not sent: the run probed routes, and none of the
        protocols it found served lists its models there (a server of Ollama's API alone lists them at /api/tags)."""
        path = sc.build(Context(self.model)).path
        if path not in {by_name(p).models_path for p in REGISTRY}:
            return None  # not a model list (/health)
        served = [p for ex in self.routes.values() if ex.status not in UNSERVED and (p := ex.protocol) is not None]
        if not served or any(p.models_path == path for p in served):
            return None
        lists = ", ".join(f"{p.name} lists them at {p.models_path}" for p in served)
        return f"not sent: no route the server serves lists its models at {path} ({lists})"

    def send_scenario(self, sc: Scenario) -> Sent | None:
        """The scenario's requests sent and their exchanges recorded (masked), nothing judged; None when the run
        timeout left it out or cut it."""
        if self.past_deadline():
            with self._lock:
                self.not_run.append(sc.name)
            return None
        ctx = Context(model=self.model, profile=self.settings.profile, context_tokens=self.context)
        req = sc.build(ctx)
        req.scenario = sc.name
        self.emit(ev.ScenarioStarted(sc.name, sc.category))
        start = time.monotonic()
        exchanges = kind_of(sc).send(self, req)
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
        if sc.name in ROUTE_PROBES and first.status == 200 and (shown := first_output_s(first)) is not None:
            with self._lock:  # the slowest protocol's plain stream scales the waits (a slow server is not hurried)
                self.plain_first_event = max(self.plain_first_event or 0.0, shown)
        self.emit(ev.ScenarioFinished(sc.name, sc.category, first.status, round(elapsed, 3),
                                      (self.stop_label if self.stopped else RUN_TIMEOUT) if cut
                                      else first.observations.aborted, done, max(self.total, done)))
        if cut:
            return None
        return Sent(sc, req, exchanges, elapsed)

    def finish(self, sent: Sent) -> Outcome:
        """A sent scenario's outcome: its reproducer, each exchange decoded, assembled and judged, its wire log files
        written. It sends nothing, so it may run while another scenario sends (``record_all``)."""
        sc, exchanges = sent.scenario, sent.exchanges
        outcome = Outcome(sc, exchanges, self.reproducer(sc, sent.request), sent.elapsed_s)
        from conformance.checks import judged
        from conformance.engine.judge import judged_rules  # (judge imports this module)

        rule_ids = judged_rules(self.settings)
        for ex in exchanges:  # decoded, assembled and judged as the scenario ends, in this worker, under the run's
            judged(analyze(ex, self.settings.profile), rule_ids)  # profile: the judging after the run reads these
        if self.ahead is not None:
            self.ahead.exchanges(exchanges)
        with self._lock:
            self.recorded.append(outcome)
        if self.settings.exitfirst:
            self._stop_at_failure(outcome)
        return outcome

    def _stop_at_failure(self, outcome: Outcome) -> None:
        """-x: judge the scenario as it ends (against the capabilities probed so far: a scenario whose capability is
        not probed yet is not judged here, the final judging does it); a gating failure stops the run."""
        from conformance.engine.judge import capabilities, judge, judged_rules
        from conformance.model import Level, gating_levels

        with self._lock:
            caps = capabilities(list(self.recorded), self.settings)
        gating = gating_levels(self.settings.strict)
        known = set(self.settings.known_failures)
        for entry in judge(outcome, caps, self.settings, judged_rules(self.settings)):
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
        return kind_of(sc).script(req, Script(self.base_url, self.settings.api_key, self.model, body_file))

    def cut_short(self, req: Request, ex: Exchange) -> bool:
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
        """Run ``chosen`` (capability probes included by the caller) and return every outcome, in run order. The
        routes' probes go first, together: what they answer decides what else is sent (``check_routes``, ``unserved``)."""
        from conformance.engine.judge import capabilities

        ordered = [sc for sc in chosen if not kind_of(sc).alone and sc.name not in HEAVY]
        self.total = len(chosen)
        probes = [sc for sc in ordered if sc.name in ROUTE_PROBES]
        with ThreadPoolExecutor(max_workers=max(1, self.settings.workers)) as pool:
            # (one probe is sent from this thread, as the whole run's one request may be: a worker thread would hold
            # the process's exit until its request ends)
            sents = pool.map(self.send_scenario, probes) if len(probes) > 1 else map(self.send_scenario, probes)
            first = [(sc, sent) for sc, sent in zip(probes, sents, strict=True) if sent is not None]
            self.routes = {sc.name: sent.exchanges[0] for sc, sent in first}
            self.check_routes([(sc.name, sent.exchanges[0]) for sc, sent in first])  # a 401, a wrong model, a wrong URL
            heads = [pool.submit(self.finish, sent) for _, sent in first]  # judged while the others send
            # what the probes showed not served is not sent (``unserved``), and the count says so from here on
            self.unsent.update({sc.name: why for sc in chosen if sc.name not in ROUTE_PROBES
                                and (why := self.unserved(sc)) is not None})
            self.total = len(chosen) - len(self.unsent)
            self.emit(self._routes_probed([sent.exchanges[0] for _, sent in first]))
            if self.settings.exitfirst:
                for head in heads:
                    head.result()  # -x: a gating failure of a probe stops the run before another is sent
            futures = [pool.submit(self.run_scenario, sc) for sc in ordered
                       if sc.name not in ROUTE_PROBES and sc.name not in self.unsent]
            made = {o.scenario.name: o for f in heads + futures if (o := f.result()) is not None}
            outcomes = [made[sc.name] for sc in ordered if sc.name in made]
        caps = capabilities(outcomes, self.settings)
        later = [sc for sc in chosen if (kind_of(sc).alone or sc.name in HEAVY) and sc.name not in self.unsent]
        alone = [sc for sc in later if sc.name not in HEAVY and (sc.needs is None or caps[sc.needs]["supported"]
                                                               or sc.needs in self.settings.expect)]
        heavy = sorted((sc for sc in later if sc.name in HEAVY), key=lambda sc: HEAVY_ORDER.index(sc.name))
        with self._lock:
            self.total -= len(later) - len(alone) - len(heavy)  # a capability the server lacks: its alone ones
        later = alone + heavy
        # one at a time on the network; each one's outcome is made (judged, its wire log written) while the next one
        # sends, since making it sends nothing. With -x, before the next one is sent: a gating failure stops there
        with ThreadPoolExecutor(max_workers=1) as finishing:
            done = []
            for sc in later:
                sent = self.send_scenario(sc)
                if sent is not None:
                    done.append(finishing.submit(self.finish, sent))
                    if self.settings.exitfirst:
                        done[-1].result()
            outcomes += [d.result() for d in done]
        return outcomes


RETRY_AFTER_CAP_S = 10.0  # a longer wait is not waited out: the 429 stands
MIN_RETRY_S = 5.0  # what must be left of the request's time limit after the wait to send it again


BACKOFF_S = (1.0, 2.0, 4.0, 8.0)  # a 429 without Retry-After: the waits before each new try, the last one repeated


def retry_after(ex: Exchange, tries: int = 0) -> float | None:
    """The seconds a 429 asks the client to wait (Retry-After in seconds, RFC 9110 §10.2.3), if at most the cap. A
    429 without Retry-After (the LiteLLM proxy's /v1/messages in its cooldown) is backed off as the OpenAI and
    Anthropic SDKs back off a 429 (a delay doubling to 8 s; openai-python and anthropic-sdk-python `_calculate_retry_
    timeout`): a client retries it, so it is no verdict on the request while the time limit allows another try."""
    if ex.status != 429:
        return None
    header = ex.header("retry-after")
    if header is None:
        return BACKOFF_S[min(tries, len(BACKOFF_S) - 1)]
    value = header.strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds <= RETRY_AFTER_CAP_S else None


def _error_text(ex: Exchange) -> str:
    """The message of an error body, short (a string error, or error.message)."""
    try:
        doc = json.loads(held(ex.body))
    except ValueError:
        return ""
    error = doc.get("error") if isinstance(doc, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return str(message)[:160] if isinstance(message, (str, int)) else ""


# the fields every protocol renders into the prompt, whatever the template (tools it may leave out: not counted)
PROMPT_FIELDS = ("messages", "system", "input", "instructions", "prompt")


def _words(value: Any) -> int:
    """The whitespace-separated words of every string in a request body (a lower bound of its tokens)."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(_words(v) for v in value.values())
    if isinstance(value, list):
        return sum(_words(v) for v in value)
    return 0
