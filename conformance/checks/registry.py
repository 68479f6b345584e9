"""The check registry: pure functions over an ``Analysis`` that yield ``Finding`` objects; they never raise.

A check is registered against the rule ids it can report with ``@check(...)``; its preconditions
(``when=``) say whether the exchange can show those rules at all. ``evaluate`` runs every check
and gives one ``Verdict`` per rule: passed, failed (with findings), not applicable, or error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from conformance.exchange import Analysis
from conformance.rules import RULES, RULES_BY_ID, Rule
from conformance.wire.body import Body

__all__ = [  # (what the package conformance.checks re-exports)
    "CHECKS",
    "ANSWERLESS_RULES", "Check", "CheckFunc", "EXCERPT_BYTES", "Finding", "Predicate", "Verdict", "check",
    "evaluate", "excerpt", "finding", "findings_of", "judged", "short", "schema_problem", "_load",
]

EXCERPT_BYTES = 160

Predicate = Callable[[Analysis], bool]
CheckFunc = Callable[[Analysis], Iterable["Finding"]]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: which rule, what was received and expected, and where."""

    rule: str
    level: str
    category: str
    message: str
    event_index: int | None = None
    byte_offset: int | None = None
    excerpt: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "category": self.category, "level": self.level,
                "message": self.message, "event_index": self.event_index,
                "byte_offset": self.byte_offset, "excerpt": self.excerpt}


@dataclass(frozen=True)
class Check:
    rules: tuple[str, ...]
    func: CheckFunc
    when: tuple[Predicate, ...]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one rule on one exchange."""

    rule: Rule
    outcome: str  # passed | failed | skipped (not judged, with the reason) | not_applicable | error
    findings: tuple[Finding, ...] = ()
    message: str = ""


CHECKS: list[Check] = []


def check(*rule_ids: str, when: Iterable[Predicate] = ()) -> Callable[[CheckFunc], CheckFunc]:
    """Register a check for these rules, run only when every precondition holds."""
    for rule_id in rule_ids:
        if rule_id not in RULES_BY_ID:
            raise KeyError(f"unknown rule {rule_id}")

    def register(func: CheckFunc) -> CheckFunc:
        CHECKS.append(Check(tuple(rule_ids), func, tuple(when)))
        return func

    return register


def excerpt(data: Body, offset: int | None, size: int = EXCERPT_BYTES) -> str:
    """A bounded, printable slice of the raw bytes starting at ``offset``."""
    if offset is None:
        return ""
    piece = data[offset : offset + size]  # (a spooled body reads only this slice)
    text = piece.decode("utf-8", errors="backslashreplace")
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text + ("…" if offset + size < len(data) else "")


def finding(a: Analysis, rule_id: str, received: str, expected: str, *,
            event: int | None = None, offset: int | None = None, remedy: str = "") -> Finding:
    """Build a finding with the "Received … / Expected …" message and a bounded excerpt."""
    rule = RULES_BY_ID[rule_id]
    if offset is None and event is not None:
        if a.watch is not None:  # the streaming judge keeps the offset of each event it names
            offset = a.watch.offset(event)
        if offset is None and event < len(a.events):
            offset = a.events[event].offset
    message = f"Received: {received} / Expected: {expected}"
    if remedy:
        message += f"\n{remedy}"
    return Finding(rule.id, rule.level, rule.category, message, event, offset,
                   excerpt(a.exchange.body, offset))


_VALIDATORS: dict[str, Any] = {}


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """What is wrong with ``value`` against ``schema`` (jsonschema's best match), None when it matches or when the
    schema itself is not valid (the request's schema, not the answer, is at fault then). The validator is built once
    per schema (the same few schemas judge every answer of a run), and jsonschema is imported on the first call (a
    judge that meets no schema starts without it)."""
    import json

    import jsonschema

    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    known = _VALIDATORS.get(key) if key is not None else None
    if known is None:
        cls = jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(schema)
            known = cls(schema)
        except jsonschema.SchemaError as exc:
            known = exc
        if key is not None and len(_VALIDATORS) < 512:
            _VALIDATORS[key] = known
    if isinstance(known, jsonschema.SchemaError):
        return None
    error = jsonschema.exceptions.best_match(known.iter_errors(value))
    return None if error is None else str(error.message)


def recorded_violations(a: Analysis, answer: Any, whole: bool, what: str) -> Iterator[Finding]:
    """The order violations an event protocol's assembler recorded as the events arrived (``Violation``: its rule,
    event, received and expected), one finding each, with the count of the rest of a rule's; the end's only when the
    stream was read whole (a client that stopped reading misses nothing it did not read)."""
    for v in answer.violations:
        if v.event is None and not whole:
            continue
        more = answer.violation_counts.get(v.rule, 0)
        yield finding(a, v.rule, v.received, v.expected, event=v.event,
                      remedy=f"{more} such {what}." if more > 1 else "")


def order_check(rules: tuple[str, ...], when: Iterable[Predicate], answer: Callable[[Analysis], Any],
                what: str) -> CheckFunc:
    """Register the check of an event protocol's order rules: the violations its assembler recorded as the events
    arrived in the ``answer`` (``recorded_violations``; the end's only on a whole stream), where every ``when``
    holds; ``what`` names the events a count of the rest speaks of."""
    from conformance.checks.conditions import complete

    def order(a: Analysis) -> Iterator[Finding]:
        yield from recorded_violations(a, answer(a), complete(a), what)

    return check(*rules, when=when)(order)


def short(value: Any, limit: int = 80) -> str:
    """A short repr for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where(rule: Rule, a: Analysis) -> bool:
    """Whether the rule judges this exchange's protocol (rules.WHERE): the registry decides, not the check."""
    if rule.protocol == "http":
        return True
    protocol = a.protocol
    if protocol is None:
        return False
    return protocol.framing == "sse" if rule.protocol == "sse" else protocol.name == rule.protocol


def _applies(rule: Rule, a: Analysis) -> bool:
    if not _where(rule, a):
        return False
    if rule.applies == "stream":
        return a.is_stream
    if rule.applies == "non-stream":
        return not a.is_stream
    return True


@dataclass(frozen=True, slots=True)
class _Plan:
    """What judging one kind of exchange (its protocol, streamed or not, the rule selection) takes, made once per kind
    instead of once per exchange: the checks with rules that can judge it, and those rules; and the verdict list an
    exchange starts from, every wanted rule not applicable, in rulebook order, with each rule's place in it and its
    passed verdict (a verdict is frozen: most of an exchange's are these, shared)."""

    rules: tuple[Rule, ...]  # the rulebook it was made from (a rulebook replaced since: the plan made again)
    checks: tuple[tuple[Check, tuple[str, ...]], ...]
    start: tuple[Verdict, ...]
    place: dict[str, int]
    passed: dict[str, Verdict]


_PLANS: dict[tuple[Any, ...], _Plan] = {}


def _plan(a: Analysis, wanted: set[str] | None) -> _Plan:
    protocol = a.protocol
    key = (len(CHECKS), None if protocol is None else (protocol.name, protocol.framing), a.is_stream,
           None if wanted is None else frozenset(wanted))
    plan = _PLANS.get(key)
    if plan is None or plan.rules is not RULES:
        checks = []
        for chk in CHECKS:
            ids = tuple(r for r in chk.rules if (wanted is None or r in wanted) and _applies(RULES_BY_ID[r], a))
            if ids:
                checks.append((chk, ids))
        chosen = [rule for rule in RULES if wanted is None or rule.id in wanted]
        plan = _Plan(RULES, tuple(checks), tuple(Verdict(rule, "not_applicable") for rule in chosen),
                     {rule.id: at for at, rule in enumerate(chosen)}, {rule.id: Verdict(rule, "passed") for rule in chosen})
        if len(_PLANS) < 256:
            _PLANS[key] = plan
    return plan


def evaluate(a: Analysis, rule_ids: Iterable[str] | None = None) -> list[Verdict]:
    """Run every check and give one verdict per rule, in rulebook order."""
    _load()
    plan = _plan(a, set(rule_ids) if rule_ids is not None else None)
    found: dict[str, list[Finding]] = {}
    applicable: list[str] = []
    errors: dict[str, str] = {}
    known: dict[Predicate, bool] = {}  # the preconditions are pure and shared by many checks: each asked once
    for chk, ids in plan.checks:
        holds = True
        try:
            for pred in chk.when:
                held = known.get(pred)
                if held is None:
                    held = known[pred] = bool(pred(a))
                if not held:
                    holds = False
                    break
        except Exception as exc:  # a precondition's bug: its rules' error, not the run's end
            for r in ids:
                errors[r] = f"precondition {pred.__name__} of {chk.func.__name__} failed: {type(exc).__name__}: {exc}"
            continue
        if not holds:
            continue
        applicable.extend(ids)
        try:
            results = list(chk.func(a))
        except Exception as exc:  # a check bug must not hide the other verdicts
            for r in ids:
                errors[r] = f"check {chk.func.__name__} failed: {type(exc).__name__}: {exc}"
            continue
        for item in results:
            if item.rule in ids:
                found.setdefault(item.rule, []).append(item)
    # every wanted rule starts not applicable; then, each outranking the one before: passed where a check judged it,
    # skipped where it needs a response and there was none, failed with its findings, error where a check broke
    verdicts = list(plan.start)
    place = plan.place
    if applicable:
        passed = plan.passed
        unanswered = _unanswered(a)
        for rid in applicable:
            if unanswered and rid not in ANSWERLESS_RULES:  # never passed without a response
                verdicts[place[rid]] = Verdict(passed[rid].rule, "skipped", message=unanswered)
            else:
                verdicts[place[rid]] = passed[rid]
    for rid, items in found.items():
        verdicts[place[rid]] = Verdict(verdicts[place[rid]].rule, "failed", tuple(items))
    for rid, message in errors.items():
        verdicts[place[rid]] = Verdict(verdicts[place[rid]].rule, "error", message=message)
    return verdicts


def judged(a: Analysis, rule_ids: frozenset[str] | None) -> list[Verdict]:
    """``evaluate`` made once per analysis and selection: a live run judges each exchange in its worker as its
    scenario ends, and the judging after the run reads these verdicts (an exchange copied with another observation
    has an analysis, and verdicts, of its own)."""
    verdicts = a.judged.get(rule_ids)
    if verdicts is None:
        verdicts = a.judged[rule_ids] = evaluate(a, rule_ids)
    return verdicts


ANSWERLESS_RULES = frozenset({"TRN-014", "TRN-010", "TRN-011", "ERR-017", "FUZ-004", "FUZ-006"})  # they judge the absence


def _unanswered(a: Analysis) -> str:
    """Why the exchange cannot pass rules that need a response ("" when it has one)."""
    ex = a.exchange
    if ex.status is not None or ex.observations.headers_unknown:
        return ""
    return f"not judged: no HTTP response ({ex.observations.aborted or 'the connection ended'})"


def findings_of(verdicts: Iterable[Verdict]) -> list[Finding]:
    return [f for v in verdicts for f in v.findings]


_LOADED: list[str] = []


def _load() -> None:
    """Register every check: each module of this package (a check registers itself, by ``@check``, when its module
    is imported) and each protocol's own checks module (``conformance/protocols/<name>/checks.py``), found by name,
    never listed by hand: the registry imports no check module, so no check module's import of it closes a circle."""
    if _LOADED:
        return
    import importlib
    import pkgutil
    from pathlib import Path

    from conformance.protocols import brought

    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name not in ("registry", "conditions"):
            importlib.import_module(f"conformance.checks.{info.name}")
    brought("conformance.protocols.{name}.checks")  # each protocol's own checks, beside its rules
    _LOADED.append("loaded")
