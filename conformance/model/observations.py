"""What the live suite observed around an exchange, as typed fields (not a dict of strings).

``to_json``/``from_json`` give the form fixtures and the wire log store; a key that is absent
stays ``None``, so "not observed" and "observed: no answer" remain different (``Followup``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class Followup:
    """A plain request sent right after the exchange: its status (None: no answer)."""

    status: int | None


@dataclass(frozen=True, slots=True)
class Disconnect:
    """What the disconnect scenario measured after the suite left a stream."""

    baseline_ttfb_s: float | None = None
    running_after: int | None = None  # the server's running generations after the disconnect
    signal: str | None = None  # where running_after was read
    cancelled_delta: int | None = None
    followup_ttfb_s: float | None = None
    other_stream_done: bool | None = None  # another client's stream completed (None: not observed)


@dataclass(frozen=True, slots=True)
class Burst:
    """What the burst scenario saw of its requests within the queue wait."""

    sent: int
    started: int  # streams whose first event arrived
    refused: int  # answered with an error status (429 is the documented one)
    queued: int  # neither started nor refused within the wait
    wait_s: float
    # how long after the streams were let go a plain stream came at the server's own pace (None: none within T): the
    # next scenario waits for it, so work the server goes on with for the streams the suite left is not judged
    # against that scenario (issue 44: the LiteLLM proxy answered nothing for 14 to 38 s after a burst)
    settled_s: float | None = None


@dataclass(frozen=True, slots=True)
class Chained:
    """The stored response a Responses request continued: its id and the input tokens its usage reported."""

    previous_id: str
    previous_input_tokens: int | None = None
    stored: bool | None = None  # the stored response's own "store" (None: it did not say)


@dataclass(frozen=True, slots=True)
class CapabilityShown:
    """An expected capability, as its probe scenario showed it."""

    name: str
    supported: bool
    source: str = "probed"
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class Observations:
    aborted: str | None = None  # why the suite stopped reading: a timeout, a cap, a transport error
    error: str | None = None  # the transport error's text
    elapsed_s: float | None = None
    disconnected_after_events: int | None = None  # the suite left the stream on purpose
    followup: Followup | None = None  # a liveness request after an error scenario
    liveness: Followup | None = None  # the fuzzer's liveness request after a generated one
    unknown_field: str | None = None  # the misspelled field an error scenario sent
    headers_unknown: bool = False  # an offline capture without its header block
    disconnect: Disconnect | None = None
    capability: CapabilityShown | None = None
    burst: Burst | None = None
    retried: str | None = None  # the suite sent the request again: why (a 429 with Retry-After, waited out)
    unstopped: str | None = None  # the answer to the same request without its stop sequences (FIN-011)
    uncapped: str | None = None  # the answer to the same request with four times its token cap (FIN-007)
    paced_s: float | None = None  # how long the clock scenario sized this stream to last (TRN-007, CHK-005)
    not_sent: str | None = None  # a request the scenario would make from the server's data and did not: why
    chained: Chained | None = None  # the stored response this request continued (previous_response_id)
    unstreamed: dict[str, Any] | None = None  # the same request's unstreamed answer, and whether it repeats (CHK-022)
    sent_bytes: int | None = None  # the request's record names a bulk it sent (the oversized body): the bytes sent

    def with_(self, **changes: Any) -> Observations:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value is False:
                continue
            if f.name in ("followup", "liveness"):
                out[f"{f.name}_status"] = value.status
            elif f.name in ("disconnect", "capability", "burst", "chained"):
                out[f.name] = {k: v for k, v in asdict(value).items() if v is not None}
            else:
                out[f.name] = value
        return out

    @classmethod
    def from_json(cls, doc: dict[str, Any] | None) -> Observations:
        doc = doc or {}
        known = {"aborted", "error", "elapsed_s", "disconnected_after_events", "followup_status", "liveness_status",
                 "unknown_field", "headers_unknown", "disconnect", "capability", "burst", "retried", "unstopped",
                 "not_sent", "chained", "uncapped", "paced_s", "unstreamed", "sent_bytes"}
        unknown = sorted(set(doc) - known)
        if unknown:
            raise ValueError(f"unknown observation {unknown[0]!r}")
        disconnect = doc.get("disconnect")
        capability = doc.get("capability")
        burst = doc.get("burst")
        chained = doc.get("chained")
        return cls(
            aborted=doc.get("aborted"), error=doc.get("error"), elapsed_s=doc.get("elapsed_s"),
            disconnected_after_events=doc.get("disconnected_after_events"),
            followup=Followup(doc["followup_status"]) if "followup_status" in doc else None,
            liveness=Followup(doc["liveness_status"]) if "liveness_status" in doc else None,
            unknown_field=doc.get("unknown_field"), headers_unknown=bool(doc.get("headers_unknown")),
            disconnect=Disconnect(**disconnect) if isinstance(disconnect, dict) else None,
            capability=CapabilityShown(**capability) if isinstance(capability, dict) else None,
            burst=Burst(**burst) if isinstance(burst, dict) else None, retried=doc.get("retried"),
            unstopped=doc.get("unstopped"), not_sent=doc.get("not_sent"), uncapped=doc.get("uncapped"),
            paced_s=doc.get("paced_s"), unstreamed=doc.get("unstreamed") if isinstance(doc.get("unstreamed"), dict) else None,
            chained=Chained(**chained) if isinstance(chained, dict) else None,
            sent_bytes=doc.get("sent_bytes") if isinstance(doc.get("sent_bytes"), int) else None,
        )
