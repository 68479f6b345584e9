"""Scenario kinds: one small class each, holding how a scenario of that kind sends its requests, the longest
it can take (``engine.bounds``), the script that reproduces it and, where the kind shows a feature by itself,
how that is judged. ``Scenario.kind`` names one; ``KINDS`` is the registry and ``kind_of`` the only lookup.

With T the total limit of one response and F the first-byte limit (min(T, 60)):
    plain, http10               T
    followup (error scenarios)  T + min(60, T)     (the request, then a liveness request; a request the
                                                    server must refuse gets only min(10, T) to begin)
    disconnect                  3T + 10            (baseline, the stream, a follow-up; counters 2 s each)
    cancel                      F + 2T + 5         (the stream's first event, the cancel call, the stream)
    repeat, stop-compare, clock 2T                 (the same request twice: prompt reuse; without and with stop;
                                                    a stream, then a longer one)
    parity                      3T                 (unstreamed twice, then streamed)
    cancel-completed            3T                 (a stream, then two cancel calls for it)
    burst                       F + 6.5            (twelve at once; the queue wait, at most F)
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from conformance.engine.client import cancel_path, record_http10
from conformance.engine.repro import curl
from conformance.exchange import Exchange, analyze
from conformance.model import Intent
from conformance.model import observations as seen
from conformance.model.limits import ABANDONED, Limits
from conformance.model.request import Request
from conformance.model.scenario import ANSWER, CAP_FIELDS, Context, Scenario
from conformance.protocols import DEFAULT_SSE, Protocol, answers_for, by_name, endpoint_of, protocol_for
from conformance.settings import liveness_total, queue_wait
from conformance.wire.body import held
from conformance.wire.untrusted import path_segment as segment_of

if TYPE_CHECKING:
    from conformance.engine.runner import Runner

BURST = 12
REFUSAL_GRACE = 0.5  # after the burst's first refusal, how long the other answers have to arrive
CLOCK_SPAN_S = 1.3  # how long the clock scenario's stream should last
CLOCK_MAX_TOKENS = 1536
TOGETHER_S = 0.01  # reads this close came together: one buffered write, split by the socket


@dataclass(frozen=True)
class Script:
    """What a reproducer needs besides the request: where it went, the key (redacted), the model, the body file."""

    base_url: str
    api_key: str | None = None
    model: str = "MODEL"
    body_file: str | None = None

    def curl(self, req: Request, with_body_file: bool = False) -> str:
        return curl(self.base_url, req, self.api_key, self.body_file if with_body_file else None)


def protocol_of(req: Request) -> Protocol:
    """The protocol a request speaks, by its route (chat's for the cancel calls and a route no protocol serves): the
    one whose plain requests a kind sends beside it."""
    return protocol_for(endpoint_of(req.path)) or by_name(DEFAULT_SSE)


def plain(req: Request, ctx: Context, *, stream: bool, max_tokens: int, long: bool = False) -> Request:
    """A plain request of ``req``'s protocol (``Protocol.plain``): a server that serves one protocol gets no other."""
    return protocol_of(req).plain(ctx, stream=stream, max_tokens=max_tokens, long=long)  # type: ignore[no-any-return]


def liveness_request(req: Request, model: str) -> Request:
    """The plain request sent after an error scenario, of the scenario's protocol: the server must still answer it."""
    return plain(req, Context(model), stream=False, max_tokens=8)


class Kind:
    """A plain scenario: one request, answered within T."""

    name: ClassVar[str] = "plain"
    alone: ClassVar[bool] = False  # runs after the concurrent scenarios, one at a time (it measures the server)

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        """The scenario's exchanges, the one it is about first."""
        return [run.send(req)]

    def seconds(self, limits: Limits) -> float:
        """The longest a scenario of this kind can take."""
        return limits.total

    def script(self, req: Request, how: Script) -> str:
        """A short shell script of what the suite did."""
        return how.curl(req, with_body_file=True)

    def feature(self, exchanges: list[Exchange], profile: str) -> tuple[str, str] | None:
        """The feature state the kind shows by itself ("supported", evidence), or None: the judge decides."""
        return None


class Followup(Kind):
    """An error scenario: the request, then a plain one the server must still answer."""

    name = "followup"

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        ex = run.send(req)
        live = run.send(liveness_request(req, run.model), replace(run.settings.limits, total=liveness_total(
            run.settings.timeout, run.plain_first_event)))
        return [replace(ex, observations=ex.observations.with_(followup=seen.Followup(live.status)))]

    def seconds(self, limits: Limits) -> float:
        return limits.total + min(60.0, limits.total)

    def script(self, req: Request, how: Script) -> str:
        return (f"{how.curl(req, True)}\n# then a plain request, which must still be answered:\n"
                f"{how.curl(liveness_request(req, how.model))}")



class Http10(Kind):
    """The request over HTTP/1.0: the body ends when the connection closes."""

    name = "http10"

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        req = run.with_headers(req)
        start = time.monotonic()
        settings = run.settings

        def sender(r: Request, lim: Limits) -> Exchange:
            return record_http10(run.base_url, r, lim, settings.api_key, settings.secrets)

        with run.gate.shared():
            ex = sender(req, settings.limits)
        if run.cut_short(req, ex):
            ex = run.resend_alone(req, settings.limits, start, ex, sender)
        return [ex]

    def script(self, req: Request, how: Script) -> str:
        return how.curl(req, True).replace("curl -sN", "curl -sN --http1.0", 1)


class Disconnect(Kind):
    """A stream left once the generation is under way, while another client's stream runs: the server must stop
    the work (its counters, else the time to a next first byte against a baseline) and finish the other stream."""

    name = "disconnect"
    alone = True

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        ctx = Context(run.model)
        before = _generations(run)  # with counters the work is read from them; else timed against a baseline
        baseline = _first_byte(run, plain(req, ctx, stream=True, max_tokens=8)) if before is None else None
        other: list[Exchange] = []
        started = threading.Event()
        other_req = replace(plain(req, ctx, stream=True, max_tokens=24, long=True), scenario=f"{req.scenario}/other",
                            retry_lost=False,
                            first_event=started)
        thread = threading.Thread(target=lambda: other.append(run.send(other_req)))
        thread.start()
        # the other client's stream is under way before this one comes (and leaves): whatever the server does to a
        # running stream when another request arrives shows on every run, not only when the timing falls so
        started.wait(run.settings.limits.first_byte)
        ex = run.send(replace(req, stop_after_events=1, counts=answers_for(req.path)))  # left once under way
        obs: dict[str, Any] = {"baseline_ttfb_s": baseline}
        thread.join(run.settings.limits.total + 5)  # the other stream ends first: a one-slot server runs it
        running = _running_after(run)
        after = _generations(run)
        if running is not None:
            obs.update(running_after=running, signal="/health generations.running")
            if before and after and "cancelled" in before and "cancelled" in after:
                obs["cancelled_delta"] = int(after["cancelled"]) - int(before["cancelled"])
        else:
            obs["followup_ttfb_s"] = _first_byte(run, plain(req, ctx, stream=True, max_tokens=8))
        if other:
            done = analyze(other[0], run.settings.profile)
            # a missing terminator alone is the protocol's framing rule, not this one's
            finished = done.protocol is not None and done.protocol.finished(done)
            obs["other_stream_done"] = other[0].status == 200 and finished and other[0].observations.aborted is None
        return [replace(ex, observations=ex.observations.with_(disconnect=seen.Disconnect(**obs))), *other]

    def seconds(self, limits: Limits) -> float:
        return 3 * limits.total + 10

    def script(self, req: Request, how: Script) -> str:
        return f"{how.curl(req, True)} | head -n 1  # read the first event, then hang up"


def _first_byte(run: Runner, req: Request) -> float | None:
    """Seconds to the first event that shows the generation under way (a role-only chunk does not)."""
    ex = run.send(replace(req, stop_after_events=1, counts=answers_for(req.path)))
    return ex.arrivals[-1][0] if ex.arrivals and ex.observations.disconnected_after_events else None


def _generations(run: Runner) -> dict[str, Any] | None:
    """The server's generation counters (the reference server's /health), if it exposes them."""
    doc = run.health("disconnect/health")
    counters = doc.get("generations") if isinstance(doc, dict) else None
    return counters if isinstance(counters, dict) else None


def _running_after(run: Runner, grace: float = 1.0) -> int | None:
    """Running generations, polled until 0 or the grace ends (short: a fast model finishes anyway)."""
    deadline = time.monotonic() + grace
    while True:
        counters = _generations(run)
        if counters is None or not isinstance(counters.get("running"), int):
            return None
        if counters["running"] == 0 or time.monotonic() > deadline:
            return int(counters["running"])
        time.sleep(0.02)


class Cancel(Kind):
    """A stream with an X-Request-ID and, once its first event has come, the cancel call for it (seed 000)."""

    name = "cancel"
    alone = True

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        result: list[Exchange] = []
        first = threading.Event()
        thread = threading.Thread(target=lambda: result.append(run.send(replace(req, first_event=first))))
        thread.start()
        first.wait(run.settings.limits.first_byte)
        call = run.send(Request(path=cancel_path(req.headers.get("X-Request-ID", "")), body={},
                                intent=Intent.CANCEL, scenario="cancel-endpoint/call"))
        thread.join(run.settings.limits.total + 5)
        return result + [call]

    def seconds(self, limits: Limits) -> float:
        return limits.first_byte + 2 * limits.total + 5

    def script(self, req: Request, how: Script) -> str:
        return f"{how.curl(req, True)} &\nsleep 1  # the stream has started\n{_cancel_call(req, how)}\nwait"


def _cancel_call(req: Request, how: Script) -> str:
    """The cancel call for the stream ``req`` opened, by its X-Request-ID (seed 000)."""
    return how.curl(Request(path=cancel_path(req.headers.get("X-Request-ID", "ID")), body={}))


class CancelCompleted(Kind):
    """A short stream with an X-Request-ID, then, once it has ended, the cancel call for that id and for the
    stream's own id: neither is a registered stream any more (seed 000: 404, cancelled: false)."""

    name = "cancel-completed"

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        ex = run.send(req)
        rid = req.headers.get("X-Request-ID", "")
        calls = [run.send(Request(path=cancel_path(rid), body={}, intent=Intent.CANCEL_COMPLETED,
                                  scenario=f"{req.scenario}/call"))]
        watch = analyze(ex, run.settings.profile).watch if ex.status == 200 else None
        first = getattr(watch, "first_chunk", None)
        stream_id = first.value.get("id") if first is not None and isinstance(first.value, dict) else None
        if isinstance(stream_id, str) and stream_id and stream_id != rid:
            # the server's id goes into the path as one percent-encoded segment: whatever it holds (../, ?, #, %2F,
            # controls) it names this stream, never another path of the server; one that cannot be a segment
            # (a dot segment, a lone surrogate) is not sent, and the exchange says why
            if segment_of(stream_id) is None:
                ex = replace(ex, observations=ex.observations.with_(
                    not_sent=f"the cancel call for the stream's id {stream_id!r}: it cannot be one path segment"))
            else:
                calls.append(run.send(Request(path=cancel_path(stream_id), body={}, intent=Intent.CANCEL_COMPLETED,
                                              scenario=f"{req.scenario}/chatcmpl")))
        return [ex, *calls]

    def seconds(self, limits: Limits) -> float:
        return 3 * limits.total

    def script(self, req: Request, how: Script) -> str:
        return f"{how.curl(req, True)}\n# the stream has ended: cancelling it now answers 404\n{_cancel_call(req, how)}"


class Repeat(Kind):
    """The same request twice: the second continues the retained history exactly (seed 001 prompt reuse); the
    second answer's cached_tokens shows the feature."""

    name = "repeat"

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        return [run.send(req), run.send(replace(req, intent=Intent.PROMPT_REUSE))]

    def seconds(self, limits: Limits) -> float:
        return 2 * limits.total

    def script(self, req: Request, how: Script) -> str:
        one = how.curl(req, True)
        return f"{one}\n# the same history again: its usage reports the reused prompt tokens\n{one}"

    def feature(self, exchanges: list[Exchange], profile: str) -> tuple[str, str] | None:
        cached = cached_tokens(exchanges[-1], profile)
        if cached:
            return "supported", f"cached_tokens {cached}"
        return "unsupported", "no cached_tokens reported for the same history"


def cached_tokens(ex: Exchange, profile: str) -> int:
    """The prompt tokens an answer's usage says were reused (0: none reported)."""
    usage = analyze(ex, profile).assembled.usage if ex.status == 200 else None
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and not isinstance(cached, bool) and cached > 0 else 0


class Clock(Kind):
    """A stream long enough in time to span a second of the server's clock: a first stream of the scenario's
    max_tokens shows the server's speed, the second asks for enough tokens to last about 1.3 s (at most
    CLOCK_MAX_TOKENS, and within a stated context). The second is the scenario's exchange."""

    name = "clock"

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        first = run.send(replace(req, scenario=f"{req.scenario}/probe"))
        asked = int((req.body or {}).get("max_tokens") or 48)
        wanted = asked
        arrivals = first.arrivals
        span = None  # how long the probe's generation took: its first read to its last, or, when its reads came
        if first.status == 200 and arrivals:  # together (a server that buffers), the time to them, an upper bound
            span = arrivals[-1][0] - arrivals[0][0]
            if span < TOGETHER_S:
                span = arrivals[-1][0]
        if span is not None and span < CLOCK_SPAN_S:
            wanted = int(asked * CLOCK_SPAN_S / max(span, 0.001)) + 1
        cap = CLOCK_MAX_TOKENS if run.context is None else min(CLOCK_MAX_TOKENS, max(asked, run.context // 2))
        wanted = max(asked, min(wanted, cap))
        ex = run.send(replace(req, body={**(req.body or {}), "max_tokens": wanted}))
        # at the probe's speed, for what this stream holds (a model that ends on its own before the cap makes no more
        # than it did in the probe: sized by the cap, a fast server's short answer was read as a buffered long one)
        grown = len(ex.body) / len(first.body) if len(first.body) and ex.status == 200 else wanted / asked
        paced = span * min(grown, wanted / asked) if span is not None and span > 0 else None
        if first.status == 200 and first.arrivals and ex.status == 200 and ex.arrivals:
            # how much longer this stream took to end than the probe: the extra tokens' generation, the prefill
            # cancelled out (a cached prefix only shortens it), so a lower bound of how long it was generated; the
            # probe's estimate alone misses a buffering server whose one write the socket split over more than
            # TOGETHER_S (the self-test's buffered-to-end, missed once in a full run)
            longer = ex.arrivals[-1][0] - first.arrivals[-1][0]
            if longer > 0:
                paced = max(paced or 0.0, longer)
        if paced is not None:
            ex = replace(ex, observations=ex.observations.with_(paced_s=round(paced, 3)))
        return [ex, first]

    def seconds(self, limits: Limits) -> float:
        return 2 * limits.total

    def script(self, req: Request, how: Script) -> str:
        return f"{how.curl(req, True)}\n# then the same with max_tokens scaled so that the stream lasts over a second"


class Compare(Kind):
    """The request changed one way first (its baseline), then as it is (both at temperature 0): the baseline's
    answer is kept on the scenario's exchange as an observation (``field``), for the rule that compares them."""

    field: ClassVar[str]
    note: ClassVar[str]  # the script's comment between the two requests

    def baseline(self, req: Request) -> dict[str, Any]:
        raise NotImplementedError

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        first = run.send(replace(req, body=self.baseline(req), scenario=f"{req.scenario}/{self.field}"))
        ex = run.send(req)
        content = answer_text(first, run.settings.profile) if first.status == 200 else None
        if content is None:
            return [ex, first]
        return [replace(ex, observations=ex.observations.with_(**{self.field: content})), first]

    def seconds(self, limits: Limits) -> float:
        return 2 * limits.total

    def script(self, req: Request, how: Script) -> str:
        return f"{how.curl(replace(req, body=self.baseline(req)))}\n# {self.note}\n{how.curl(req, True)}"


def answer_text(ex: Exchange, profile: str) -> str | None:
    """The text of an answer's first choice, as its protocol's client sees it (chat's assembly, or the protocol's
    ``client_view``); None when it has none."""
    a = analyze(ex, profile)
    protocol = a.protocol
    if protocol is not None and protocol.client_view is not None:
        content = protocol.client_view(a).get("content")
        return content[:4096] if isinstance(content, str) else None
    choices = a.assembled.choices
    return choices[min(choices)].content[:4096] if choices else None


class StopCompare(Compare):
    """Without its stop sequences first: the stopped answer must be the unstopped one cut before the first sequence
    (FIN-011), not more."""

    name = "stop-compare"
    field = "unstopped"
    note = "the same request with its stop sequences: the answer is the first cut before them"

    def baseline(self, req: Request) -> dict[str, Any]:
        return {k: v for k, v in (req.body or {}).items() if k not in STOP_FIELDS}


UNCAPPED = 4  # the comparison's cap, times the scenario's
STOP_FIELDS = ("stop", "stop_sequences")  # OpenAI's APIs' and Anthropic's


class CapCompare(Compare):
    """With four times its token cap first: an answer that is the longer one cut short was cut by the cap, and must
    say length (FIN-007), whatever its usage counts."""

    name = "cap-compare"
    field = "uncapped"
    note = "the same request with its own cap: the answer is the first cut short, and says length"

    def baseline(self, req: Request) -> dict[str, Any]:
        body = dict(req.body or {})
        for name in CAP_FIELDS:
            if isinstance(body.get(name), int):
                body[name] = body[name] * UNCAPPED
        return body


class Parity(Kind):
    """The same request unstreamed twice, then streamed (CHK-022): the first unstreamed answer, and whether the
    second repeated it, are kept on the stream's exchange. Only a repeatable server is judged."""

    name = "parity"

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        from conformance.checks.parity import unstreamed

        body = self.unstreamed(req)
        first = run.send(replace(req, body=body, scenario=f"{req.scenario}/unstreamed"))
        again = run.send(replace(req, body=body, scenario=f"{req.scenario}/unstreamed-again"))
        ex = run.send(req)
        one = unstreamed(first, run.settings.profile)
        if one is None:
            return [ex, first, again]
        seen = {**one, "repeatable": one == unstreamed(again, run.settings.profile)}
        return [replace(ex, observations=ex.observations.with_(unstreamed=seen)), first, again]

    def seconds(self, limits: Limits) -> float:
        return 3 * limits.total

    @staticmethod
    def unstreamed(req: Request) -> dict[str, Any]:
        """The request's body asking for no stream (and so no stream_options)."""
        return {**{k: v for k, v in (req.body or {}).items() if k != "stream_options"}, "stream": False}

    def script(self, req: Request, how: Script) -> str:
        once = how.curl(replace(req, body=self.unstreamed(req)))
        return (f"{once}\n# twice: the same answer both times shows the server repeatable\n{once}\n"
                f"# then streamed: the stream assembles to that answer\n{how.curl(req, True)}")


class Burst(Kind):
    """Many streams at once, each left after its first event. Each request has the queue wait to start or be
    refused; one still waiting then is queued (ERR-018), and the burst ends: nothing is waited out. The refused
    ones are what it shows (ERR-014), else one that started."""

    name = "burst"
    alone = True

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        settings = run.settings
        wait = queue_wait(settings.timeout, run.plain_first_event)
        limits = replace(settings.limits, first_byte=min(settings.limits.first_byte, wait),
                         idle=min(settings.limits.idle, wait), total=min(settings.limits.total, wait + 5))
        arrived, release, abandon, refusal = (threading.Semaphore(0), threading.Event(), threading.Event(),
                                              threading.Event())
        held = replace(req, stop_after_events=1, arrived=arrived, hold=release, counts=answers_for(req.path),
                       abandon=abandon)
        begin = time.monotonic()

        def one(_: int) -> Exchange:
            ex = run.send(held, limits)
            if ex.status is not None and ex.status >= 400:
                refusal.set()
            if ex.observations.disconnected_after_events is None:
                arrived.release()  # refused, ended or given up on without holding a stream
            return ex

        with ThreadPoolExecutor(max_workers=BURST) as pool:
            futures = [pool.submit(one, i) for i in range(BURST)]
            deadline, grace_end, answered = begin + wait + 1, None, 0  # one wait for all, not one each
            while answered < BURST:  # every request is answered, held or given up on, then all let go
                now = time.monotonic()
                if refusal.is_set() and grace_end is None:
                    grace_end = now + REFUSAL_GRACE  # a refusal shows the queue's bound: the rest come together
                end = deadline if grace_end is None else min(deadline, grace_end)
                if now >= end:
                    break
                if arrived.acquire(timeout=min(end - now, 0.1)):
                    answered += 1
            release.set()
            abandon.set()
            exchanges = [_queued(f.result()) for f in futures]
        started = [ex for ex in exchanges if ex.observations.disconnected_after_events is not None]
        refused = [ex for ex in exchanges if ex.status is not None and ex.status >= 400]
        queued = len(exchanges) - len(started) - len(refused)
        counts = seen.Burst(sent=BURST, started=len(started), refused=len(refused), queued=queued, wait_s=round(wait, 3),
                            settled_s=_settle(run, req))
        shown = [ex for ex in refused if ex.status == 429][:2] or (started or refused or exchanges)[:1]
        first = shown[0]
        return [replace(first, observations=first.observations.with_(burst=counts)), *shown[1:]]

    def seconds(self, limits: Limits) -> float:
        # the burst, then the streams that settle it: within T, the last one's 429 waits within T more
        return limits.first_byte + 6.5 + SETTLE_PAUSE_S + 2 * limits.total

    def script(self, req: Request, how: Script) -> str:
        return (f"for i in $(seq {BURST}); do\n  {how.curl(req, True)} | head -n 1 &\ndone\n"
                "wait  # the refused ones answer 429")


SETTLE_PAUSE_S = 0.5  # the server's moment to notice the disconnects
SETTLED_S = 1.0  # a settle stream's first output within max(this, 3x the plain stream's): back at its own pace


def _settle(run: Runner, req: Request) -> float | None:
    """Once the burst's streams are let go, plain short streams, one after another, until one shows its first output
    at the server's own pace (within max(1 s, 3x the plain stream's time to first output)), all within T: a server
    still busy with the streams the suite left (a backend generating for them, a proxy relaying them to their end)
    answers late, and the next scenario (the oversized body, timed against its deadline) is sent only after it. The
    seconds until then, or None if T passed first; the requests are not judged."""
    from conformance.engine.outcome import first_output_s

    time.sleep(SETTLE_PAUSE_S)
    start = time.monotonic()
    total = run.settings.limits.total
    pace = max(SETTLED_S, 3 * (run.plain_first_event or 0.0))
    ctx = Context(model=run.model, profile=run.settings.profile, context_tokens=run.context)
    probe = replace(plain(req, ctx, stream=True, max_tokens=ANSWER), scenario=f"{req.scenario}/settle")
    while (left := total - (time.monotonic() - start)) >= SETTLED_S:
        ex = run.send(probe, replace(run.settings.limits, total=left))
        if ex.status is None:
            return None
        first = first_output_s(ex)
        if ex.status >= 400 or first is None or first <= pace:  # a refusal, or no output, shows no pace to wait for
            return round(time.monotonic() - start, 3)
    return None


def _queued(ex: Exchange) -> Exchange:
    """A burst request the suite gave up on after its queue wait: the limit was the suite's, not a time limit
    the server broke, so it is named for what it was (ERR-018 judges it; TRN-010 and TRN-014 do not)."""
    if ex.observations.aborted in ("first-byte timeout", "idle timeout", "total timeout"):
        return replace(ex, observations=ex.observations.with_(aborted=ABANDONED))
    return ex






class Chain(Kind):
    """The Responses API's state: a stored response, then a streamed request continuing it by its id
    (``previous_response_id``); then the id of a response made with ``store: false`` and an id never given out,
    each of which must be refused. The continuation is the scenario's exchange (the capability responses-state)."""

    name = "chain"

    def send(self, run: Runner, req: Request) -> list[Exchange]:
        from conformance.protocols.responses.scenarios import NEVER_STORED, RECALL

        stored = run.send(replace(req, scenario=f"{req.scenario}/stored"))
        previous, why = _response_id(stored)
        if previous is None:
            return [replace(stored, observations=stored.observations.with_(
                not_sent=f"the request continuing it: {why}"))]
        body = {**(req.body or {}), "input": RECALL, "stream": True}
        body.pop("store", None)
        usage = _json(stored).get("usage")
        tokens = usage.get("input_tokens") if isinstance(usage, dict) else None
        chained = run.send(replace(req, body={**body, "previous_response_id": previous}, intent=Intent.CHAINED))
        store = _json(stored).get("store")
        chained = replace(chained, observations=chained.observations.with_(chained=seen.Chained(
            previous, tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
            store if isinstance(store, bool) else None)))
        out = [chained, stored]
        unstored = run.send(replace(req, body={**(req.body or {}), "store": False},
                                    scenario=f"{req.scenario}/not-stored"))
        unstored_id, _ = _response_id(unstored)
        refused = [(unstored_id, "unstored")] if unstored_id is not None else []
        for ref, label in [*refused, (NEVER_STORED, "unknown")]:
            out.append(run.send(replace(req, body={**body, "previous_response_id": ref}, intent=Intent.UNSTORED,
                                        scenario=f"{req.scenario}/{label}")))
        return out + [unstored]

    def seconds(self, limits: Limits) -> float:
        return 5 * limits.total

    def script(self, req: Request, how: Script) -> str:
        return (f"{how.curl(req, True)}\n# then, streamed, the same conversation continued: \"previous_response_id\" "
                "set to the id this answer gave; then the id of a store: false answer and an unknown id (both 4xx)")


MAX_ID = 512  # a response id longer than this is not sent back


def _json(ex: Exchange) -> dict[str, Any]:
    try:
        doc = json.loads(held(ex.body)) if ex.status == 200 else None
    except ValueError:
        doc = None
    return doc if isinstance(doc, dict) else {}


def _response_id(ex: Exchange) -> tuple[str | None, str]:
    """The id a non-stream response object gave (None, and why not: the server's data decides what is sent back
    only as a JSON string of bounded length, never as a path)."""
    if ex.status != 200:
        return None, f"the stored request answered {ex.status}"
    rid = _json(ex).get("id")
    if not isinstance(rid, str) or not rid or len(rid) > MAX_ID:
        return None, f"the answer has no usable id ({type(rid).__name__}, at most {MAX_ID} characters)"
    return rid, ""


KINDS: dict[str, Kind] = {k.name: k for k in (Kind(), Followup(), Http10(), Disconnect(), Cancel(), CancelCompleted(),
                                               Repeat(), Clock(), StopCompare(), CapCompare(), Burst(),
                                               Chain(), Parity())}


def kind_of(sc: Scenario) -> Kind:
    """The scenario's kind (``KeyError`` for a name no class declares: a bug in the scenario table)."""
    return KINDS[sc.kind]
