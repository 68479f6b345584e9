"""Fuzz: the properties of ``conformance fuzz``, judged on each generated request's exchange.

The exchange's intent says the request's kind (``fuzz-valid``, ``fuzz-invalid``, ``fuzz-lenient``,
see conformance.fuzz.requests). A valid request's response is judged by every must rule of the
other categories; a failure there fails FUZ-001 and names the rule.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.checks.registry import Finding, check, evaluate, finding
from conformance.checks.transport import ABORTS_SIZE, ABORTS_TIME
from conformance.exchange import Analysis
from conformance.model import Intent
from conformance.rules import RULES

FUZZ_INTENTS = frozenset({Intent.FUZZ_VALID, Intent.FUZZ_INVALID, Intent.FUZZ_LENIENT})
DOCUMENTED_4XX = frozenset({400, 404, 413, 422, 429})  # ../shared/seeds/003 §5 and §2.1
ENVELOPE = ("ERR-001", "ERR-002", "ERR-004")
# Judged by FUZ-004/005 themselves, or meaningful only for the scenario built to show them.
NOT_FOR_FUZZ = frozenset({"TRN-007", "TRN-010", "TRN-011", "TRN-008"})
FRAMING_MUST = tuple(r.id for r in RULES if r.category == "framing" and r.level == "must")
CONFORMANT_MUST = tuple(r.id for r in RULES if r.level == "must" and r.category not in ("fuzz", "framing")
                        and r.id not in NOT_FOR_FUZZ)


def fuzzed(a: Analysis) -> bool:
    return a.intent in FUZZ_INTENTS


def _answered(a: Analysis) -> bool:
    return a.exchange.status is not None


def _failing(a: Analysis, rule_ids: tuple[str, ...]) -> list[Finding]:
    return [f for v in evaluate(a, rule_ids) for f in v.findings]


def _envelope_problem(a: Analysis) -> str:
    bad = _failing(a, ENVELOPE)
    return f"{bad[0].rule}: {bad[0].message.splitlines()[0]}" if bad else ""


@check("FUZ-001", when=(lambda a: a.intent in (Intent.FUZZ_VALID, Intent.FUZZ_LENIENT), _answered))
def valid_answered(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status or 0
    if status >= 500:
        return  # FUZ-003
    if 200 <= status < 300:
        bad = _failing(a, CONFORMANT_MUST)
        if bad:
            rules = sorted({f.rule for f in bad})
            yield finding(a, "FUZ-001", f"a {status} response that fails {', '.join(rules)}: "
                          f"{bad[0].message.splitlines()[0]}", "a conformant response",
                          event=bad[0].event_index, offset=bad[0].byte_offset)
        return
    if a.intent == Intent.FUZZ_VALID and status not in DOCUMENTED_4XX:
        yield finding(a, "FUZ-001", f"status {status} for a valid request",
                      f"200 or one of {', '.join(map(str, sorted(DOCUMENTED_4XX)))}")
    elif status >= 400 and (problem := _envelope_problem(a)):
        yield finding(a, "FUZ-001", f"a {status} refusal without the error envelope ({problem})",
                      '{"error": {"message": …}} as application/json', offset=0)
    elif status < 400:
        yield finding(a, "FUZ-001", f"status {status}", "200 or a 4xx")


@check("FUZ-002", when=(lambda a: a.intent == Intent.FUZZ_INVALID, _answered))
def invalid_refused(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status or 0
    if status >= 500:
        return  # FUZ-003
    if not 400 <= status < 500:
        yield finding(a, "FUZ-002", f"status {status} for an invalid request", "a 4xx refusal", offset=0)
    elif problem := _envelope_problem(a):
        yield finding(a, "FUZ-002", f"a {status} refusal without the error envelope ({problem})",
                      '{"error": {"message": …}} as application/json', offset=0)


@check("FUZ-003", when=(fuzzed, _answered))
def no_server_error(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status or 0
    if status >= 500:
        yield finding(a, "FUZ-003", f"status {status}", "a 2xx or a 4xx", offset=0)


@check("FUZ-004", when=(fuzzed,))
def no_hang(a: Analysis) -> Iterator[Finding]:
    aborted = a.exchange.observations.aborted
    if aborted in ABORTS_TIME or aborted in ABORTS_SIZE:
        yield finding(a, "FUZ-004", f"the response was abandoned: {aborted}",
                      "a complete response within the limits", offset=len(a.exchange.body) or None)
    elif aborted:
        yield finding(a, "FUZ-004", f"no response: {aborted} ({a.exchange.observations.error or ''})",
                      "a response")


@check("FUZ-005", when=(fuzzed, lambda a: a.success and a.format == "sse"))
def stream_intact(a: Analysis) -> Iterator[Finding]:
    bad = _failing(a, FRAMING_MUST)
    if bad:
        yield finding(a, "FUZ-005", f"{bad[0].rule}: {bad[0].message.splitlines()[0]}", "an intact event stream",
                      event=bad[0].event_index, offset=bad[0].byte_offset)


@check("FUZ-006", when=(fuzzed, lambda a: a.exchange.observations.liveness is not None))
def still_alive(a: Analysis) -> Iterator[Finding]:
    liveness = a.exchange.observations.liveness
    status = liveness.status if liveness is not None else None
    if status != 200:
        what = f"status {status}" if status is not None else "no answer"
        yield finding(a, "FUZ-006", f"a plain request right after this one got {what}", "200")
