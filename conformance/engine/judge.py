"""Judging a run: capabilities from the recorded outcomes, then every rule on every exchange.

Pure: it reads only the outcomes (live, or loaded from a wire log) and the settings, so a live run
and ``conformance rejudge`` of its wire log give the same verdicts.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from conformance.checks import judged
from conformance.checks.transport import silences
from conformance.engine.kinds import kind_of
from conformance.engine.outcome import Outcome
from conformance.exchange import Exchange, analyze
from conformance.model import BAD_INPUT, Intent, Level, gating_levels
from conformance.model import Outcome as Verdict
from conformance.model.observations import CapabilityShown
from conformance.model.refusal import Cause, cause
from conformance.model.scenario import CAP_FIELDS
from conformance.results import CheckEntry, RunResult
from conformance.rules import RULES, RULES_BY_ID
from conformance.scenarios import BY_NAME, CAPABILITY_SCENARIOS, SCENARIOS, protocol_of, route_needed
from conformance.settings import Settings
from conformance.wire.body import held

BASE_SCENARIOS = frozenset({"stream-plain", "non-stream"})  # a plain stream and a plain JSON answer
NO_SCENARIO = "—"


def scenarios_for(rule_ids: frozenset[str] | None, chosen: frozenset[str] | None = None,
                  profile: str = "openai", protocols: frozenset[str] | None = None) -> list[str]:
    """The scenarios to run for these rules: those of the rules' categories, a plain stream and a plain
    answer, and the probes of the capabilities they need (all scenarios when no rule is chosen), each with the probe
    of its protocol's route. A scenario for some dialects only runs under their profiles; an opt-in one only when
    chosen by name. With ``protocols`` (``--protocol``), only scenarios whose requests speak those protocols: a
    server of one protocol gets no request of another."""
    if chosen is not None:
        names = set(chosen)
    elif rule_ids is None:
        names = {sc.name for sc in SCENARIOS}
    else:
        categories = {RULES_BY_ID[r].category for r in rule_ids}
        names = {sc.name for sc in SCENARIOS if sc.category in categories
                 and (not sc.only_for or set(sc.only_for) & rule_ids)}
        if any(protocol_of(BY_NAME[n]) == "chat" for n in names):
            names |= BASE_SCENARIOS
    if chosen is None:
        names = {n for n in names if BY_NAME[n].runs_under(profile)}
    if protocols is not None:
        names = {n for n in names if protocol_of(BY_NAME[n]) in protocols}
    names |= {CAPABILITY_SCENARIOS[sc.needs] for sc in SCENARIOS if sc.name in names and sc.needs}
    names |= {CAPABILITY_SCENARIOS[route] for n in set(names) if (route := route_needed(BY_NAME[n])) is not None}
    if any(protocol_of(BY_NAME[n]) == "chat" for n in names):  # TRN-006 is judged on a scenario of its own
        names.add(CAPABILITY_SCENARIOS["request-id"])
    return [sc.name for sc in SCENARIOS if sc.name in names]


def capabilities(outcomes: list[Outcome], settings: Settings,
                 unsent: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Each capability, probed from the scenario that shows it (or expected by the user); one whose probe was not
    sent, its route not served (``unsent``), is unsupported with that evidence. ``--protocol`` leaves out the other
    protocols' capabilities: the run said it would not ask."""
    expect, unsent = settings.expect, unsent or {}
    by_name = {o.scenario.name: o.exchanges[0] for o in outcomes}
    caps: dict[str, dict[str, Any]] = {}
    for name, scenario in CAPABILITY_SCENARIOS.items():
        if settings.protocols and protocol_of(BY_NAME[scenario]) not in settings.protocols:
            continue
        ex = by_name.get(scenario)
        if ex is not None:
            supported, evidence = _probe(name, ex, settings.profile)
        else:
            supported, evidence = False, unsent.get(scenario, f"scenario {scenario} did not run")
        probed = ex is not None or scenario in unsent
        source = "not probed" if not probed else "expected" if name in expect else "probed"  # (expected, yet its
        # probe not run: a selection left it out, and no run can say yes or no)
        caps[name] = {"supported": supported, "source": source, "evidence": evidence}
    return caps


def _probe(name: str, ex: Exchange, profile: str) -> tuple[bool, str]:
    status = ex.status
    head = ex.body[:160].decode("utf-8", "replace")
    if status is None:
        return False, f"no response ({ex.observations.aborted})"
    if name == "request-id":
        got = ex.header("x-request-id")
        return got == ex.request_header("x-request-id"), f"X-Request-ID {got!r} returned"
    if name == "cancel-endpoint":
        ok = status == 404 and '"cancelled"' in head
        return ok, f"unknown id answered {status} {head!r}"
    if name == "ollama":
        return status == 200 and head.lstrip().startswith("{"), f"POST /api/chat answered {status}"
    if not 200 <= status < 300:
        return False, f"answered {status} {head!r}"
    if name == "responses-state":  # the continuation is the chain's first exchange, if it was sent
        return ex.intent == Intent.CHAINED, ("previous_response_id answered " + str(status) if ex.intent ==
                                             Intent.CHAINED else ex.observations.not_sent or "no continuation sent")
    a = analyze(ex, profile)
    if name == "usage":
        return a.assembled.usage is not None, "a usage chunk" if a.assembled.usage else "no usage chunk"
    if name == "reasoning":
        reasoning = any(c.reasoning for c in a.assembled.choices.values())
        return reasoning, "a reasoning channel" if reasoning else "no reasoning in the answer"
    shown = a.protocol.shows(name, a) if a.protocol is not None and a.protocol.shows is not None else None
    return shown if shown is not None else (True, f"answered {status}")


def judge(outcome: Outcome, caps: dict[str, dict[str, Any]], settings: Settings,
          rule_ids: frozenset[str] | None) -> list[CheckEntry]:
    """Check entries for every rule each exchange of the scenario could show."""
    sc = outcome.scenario
    skip = _skip_reason(sc.needs, caps, settings)
    if skip:  # the scenario's own category is skipped, with the evidence
        skipped = _skipped(sc, skip, rule_ids, outcome.reproducer)
        # what no capability excuses is judged still: a valid request answered 5xx, a request with no response
        # (read from the verdicts the worker made: a rule's verdict does not depend on which others are judged)
        return skipped + [CheckEntry(v.rule.id, v.rule.category, v.rule.level, sc.name, Verdict(v.outcome),
                                     "\n".join(f.message for f in v.findings[:3]) or v.message, None,
                                     outcome.reproducer, findings=[f.to_json() for f in v.findings])
                          for ex in outcome.exchanges for v in judged(analyze(ex, settings.profile), rule_ids)
                          if v.rule.id in ALWAYS | REFUSAL_ITSELF and v.outcome != "not_applicable"]
    entries: list[CheckEntry] = []
    variant = refused_variant(outcome.exchanges[0]) if sc.needs is not None else None
    usage_skip = _skip_reason("usage", caps, settings)  # scenarios that ask for usage besides the usage probe
    shown = [name for name, probe in CAPABILITY_SCENARIOS.items() if probe == sc.name and name in settings.expect]
    for index, ex in enumerate(outcome.exchanges):
        if index == 0 and shown:  # the scenario that probes an expected capability also judges it
            cap = CapabilityShown(shown[0], **caps[shown[0]])
            ex = replace(ex, observations=ex.observations.with_(capability=cap))
        name = ex.scenario if ex.scenario not in ("live", "") else sc.name
        for verdict in judged(analyze(ex, settings.profile), rule_ids):
            if verdict.outcome == "not_applicable":
                continue
            rule = verdict.rule
            outcome_name, message = Verdict(verdict.outcome), verdict.message
            if rule.id == "TRN-006" and not caps["request-id"]["supported"] and "request-id" not in settings.expect:
                outcome_name = Verdict.SKIPPED
                message = f"capability request-id unsupported: {caps['request-id']['evidence']}"
            elif variant and rule.category == sc.category and index == 0:
                outcome_name, message = Verdict.SKIPPED, f"variant unsupported: {variant}"
            elif rule.category == "usage" and rule.id != "USG-001" and _asks_usage(ex) and usage_skip:
                outcome_name, message = Verdict.SKIPPED, usage_skip  # 003 §3.4: no usage at all is legal
            elif verdict.outcome == "failed" and rule.id not in JUDGES_REFUSALS and \
                    rule.category not in REFUSAL_CATEGORIES and (why := _refused_for(ex)) is not None:
                outcome_name, message = Verdict.SKIPPED, why.reason()  # the refusal's own cause, not the feature
            evidence = None
            if verdict.findings:
                first = verdict.findings[0]
                if outcome_name != Verdict.SKIPPED:  # a skip keeps its reason; what was found stays in its findings
                    message = "\n".join(f.message for f in verdict.findings[:3])
                evidence = {"event_index": first.event_index, "byte_offset": first.byte_offset,
                            "excerpt": first.excerpt, "status": ex.status, "headers": headers_that_matter(ex)}
            entries.append(CheckEntry(rule.id, rule.category, rule.level, name, outcome_name, message, evidence,
                                      outcome.reproducer, findings=[f.to_json() for f in verdict.findings]))
    return entries


def _skipped(sc: Any, reason: str, rule_ids: frozenset[str] | None, reproducer: str = "") -> list[CheckEntry]:
    """The rules of the scenario's category, skipped for ``reason`` (a capability the server lacks)."""
    return [CheckEntry(r.id, r.category, r.level, sc.name, Verdict.SKIPPED, reason, None, reproducer)
            for r in RULES if r.category == sc.category and (rule_ids is None or r.id in rule_ids)]


ALWAYS = frozenset({"ERR-021", "TRN-014"})  # judged even where a capability is unsupported
# ... and the refusal that made it unsupported, where the profile documents how it is refused (seed 001's 400
# unsupported_value naming the field, under --profile strict): a refusal with another code is no documented refusal
REFUSAL_ITSELF = frozenset({"ERR-026"})
# A valid request refused for a cause its message names (the prompt beyond the context, a rate limit, the key, the
# body's size, an overloaded server): the rules that judge a refusal as such (its status, envelope, code) still judge
# it; a rule that would blame the request's feature (a tool_result turn, system blocks, an agent's request) is
# skipped with the cause. Requests meant to be refused (bad input, an oversized body) are judged as they are.
REFUSAL_CATEGORIES = frozenset({"errors", "transport", "framing", "fuzz"})
JUDGES_REFUSALS = frozenset({"MSG-021", "MSG-022", "MSG-024", "OLL-014", "OLL-015", "RSP-026"})
MEANT_TO_BE_REFUSED = BAD_INPUT | {Intent.OVERSIZED, Intent.UNKNOWN_PARAMETER, Intent.UNSUPPORTED_OPTIONS,
                                   Intent.IMAGE_MISPLACED, Intent.OLLAMA_FAILURE, Intent.UNSTORED,
                                   Intent.CANCEL_UNKNOWN, Intent.FUZZ_INVALID, Intent.JSON_AS_TEXT}


def _refused_for(ex: Exchange) -> Cause | None:
    """The cause a valid request's refusal names (None: not refused, meant to be refused, or no cause named)."""
    if ex.status is None or ex.status < 400 or ex.intent in MEANT_TO_BE_REFUSED:
        return None
    return cause(ex.status, held(ex.body))
VARIANT_FIELDS = ("tool_choice", "parallel_tool_calls", "response_format", "reasoning_effort")
REFUSAL_CODES = ("unsupported_value", "invalid_value", "unsupported_parameter")


def _error_object(ex: Exchange) -> dict[str, Any] | None:
    """The body's error object, if it has one."""
    try:
        error = json.loads(held(ex.body)).get("error")
    except (ValueError, AttributeError):
        return None
    return error if isinstance(error, dict) else None


def _refusal(ex: Exchange) -> dict[str, Any] | None:
    """The error of a documented refusal: a 4xx (not 429) whose code says the server does not support what was
    asked (seed 001's unsupported_value, invalid_value)."""
    if ex.status is None or not 400 <= ex.status < 500 or ex.status == 429:
        return None
    error = _error_object(ex)
    return error if error is not None and error.get("code") in REFUSAL_CODES else None


def refused_variant(ex: Exchange) -> str | None:
    """The variant a documented refusal names (seed 001: a 4xx with code unsupported_value or invalid_value and
    the field as param), e.g. ``tool_choice='required' refused: 400 unsupported_value``; None otherwise."""
    error = _refusal(ex)
    if error is None:
        return None
    param = error.get("param")
    field = next((f for f in VARIANT_FIELDS if isinstance(param, str) and param.split(".")[0].split("[")[0] == f),
                 None)
    if field is None:
        return None
    body = ex.request if isinstance(ex.request, dict) else {}
    return f"{field}={json.dumps(body.get(field))[:60]} refused: {ex.status} {error['code']}"


def _asks_usage(ex: Exchange) -> bool:
    body = ex.request if isinstance(ex.request, dict) else {}
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


EVIDENCE_HEADERS = ("content-type", "content-length", "transfer-encoding", "content-encoding", "cache-control",
                    "x-accel-buffering", "x-request-id", "retry-after", "connection")


def headers_that_matter(ex: Exchange) -> dict[str, str]:
    """The response headers the rules read, as the server sent them."""
    return {name: value for name in EVIDENCE_HEADERS if (value := ex.header(name)) is not None}


def _skip_reason(needs: str | None, caps: dict[str, dict[str, Any]], settings: Settings) -> str:
    if needs is None or needs in settings.expect or needs not in caps or caps[needs]["supported"]:
        return ""  # (not in caps: a capability of a protocol --protocol left out, none of whose scenarios ran)
    return f"capability {needs} unsupported: {caps[needs]['evidence']}"


def judged_rules(settings: Settings) -> frozenset[str]:
    """The rules a run judges: those chosen, else every rule but the fuzzer's."""
    return settings.rules if settings.rules is not None else _ALL_BUT_FUZZ


_ALL_BUT_FUZZ = frozenset(r.id for r in RULES if r.category != "fuzz")


def judge_run(outcomes: list[Outcome], settings: Settings, model: str, *, tool: dict[str, str], started_at: str,
              duration_s: float, incomplete: dict[str, Any] | None = None,
              unsent: dict[str, str] | None = None) -> RunResult:
    """The ``RunResult`` of recorded outcomes: every chosen rule judged (or listed as skipped, with why). ``unsent``:
    the scenarios not sent since their route is not served (``Runner.unserved``), listed with why."""
    unsent = unsent or {}
    caps = capabilities(outcomes, settings, unsent)
    rule_ids = judged_rules(settings)
    result = RunResult(tool=tool, started_at=started_at, duration_s=duration_s, strict=settings.strict,
                       target={"base_url": settings.base_url, "model": model, "profile": settings.profile,
                               "capabilities": caps}, incomplete=incomplete, tokens=token_totals(outcomes, settings.profile))
    if settings.label:
        result.target["label"] = settings.label
    variants = {o.scenario.name: v for o in outcomes if o.scenario.needs and (v := refused_variant(o.exchanges[0]))}
    if variants:
        result.target["variants"] = variants  # supported capabilities, these variants of them refused as documented
    for outcome in outcomes:
        result.checks += judge(outcome, caps, settings, rule_ids)
        first = outcome.exchanges[0]
        entry: dict[str, Any] = {"name": outcome.scenario.name, "category": outcome.scenario.category, "status": first.status,
                 "elapsed_s": round(outcome.elapsed_s, 3), "aborted": first.observations.aborted}
        retried = sorted({ex.observations.retried for ex in outcome.exchanges if ex.observations.retried})
        if retried:
            entry["retried"] = "; ".join(retried)
        if (first.header("content-type") or "").startswith("text/event-stream") and first.arrivals:
            entry["timeline"] = timeline(first.arrivals)
            first_byte, gap = silences(first.arrivals)  # TRN-019's measure, reported for every stream
            entry["first_byte_s"], entry["longest_silence_s"] = round(first_byte, 3), round(gap, 3)
        result.scenarios.append(entry)
    for name, why in unsent.items():  # its category's rules skipped, as its sent scenario's would be
        sc = BY_NAME[name]
        result.checks += _skipped(sc, _skip_reason(sc.needs, caps, settings) or why, rule_ids)
        result.scenarios.append({"name": name, "category": sc.category, "status": None, "elapsed_s": 0.0,
                                 "aborted": None, "not_sent": why})
    result.target["features"] = features(outcomes, result.checks, caps, settings, unsent)
    seen = {c.rule for c in result.checks}
    ran = {o.scenario.name for o in outcomes}
    for rule in RULES:  # a chosen rule no exchange could show is listed, not dropped
        if rule.id in rule_ids and rule.id not in seen:
            reason = _unjudged_reason(rule.category, ran, caps, settings)
            result.checks.append(CheckEntry(rule.id, rule.category, rule.level, NO_SCENARIO, Verdict.SKIPPED, reason))
    if settings.known_failures:
        from conformance.baseline import apply_baseline

        apply_baseline(result, [{"rule": r, "scenario": s} for r, s in settings.known_failures])
    return result


def features(outcomes: list[Outcome], checks: list[CheckEntry], caps: dict[str, dict[str, Any]],
             settings: Settings, unsent: dict[str, str] | None = None) -> dict[str, dict[str, str]]:
    """Each feature variant a scenario shows: supported, unsupported (with the evidence: the capability's probe
    or a documented refusal, a 4xx with code unsupported_value or invalid_value), or failed (the gating rules of
    the feature's own category that failed in its scenario: a chunk-envelope failure is not the feature's)."""
    gating = gating_levels(settings.strict)
    out: dict[str, dict[str, str]] = {}
    for o in outcomes:
        sc, first = o.scenario, o.exchanges[0]
        if not sc.variant:
            continue
        failed = sorted({c.rule for c in checks if c.scenario == sc.name and c.category == sc.category
                         and c.outcome in (Verdict.FAILED, Verdict.ERROR) and Level(c.level) in gating})
        skip = _skip_reason(sc.needs, caps, settings)
        documented = refused_variant(first) or _documented_refusal(first)
        probe = next((name for name, scenario in CAPABILITY_SCENARIOS.items() if scenario == sc.name), None)
        if failed:
            state, evidence = "failed", ", ".join(failed)
        elif skip:
            state, evidence = "unsupported", skip
        elif probe is not None:
            state = "supported" if caps[probe]["supported"] else "unsupported"
            evidence = caps[probe]["evidence"]
            unshown = _not_shown(sc, first, settings) if state == "supported" and sc.observable else ""
            if unshown:
                state, evidence = "answered, not shown", f"{evidence}, but {unshown}"
        elif documented:
            state, evidence = "unsupported", documented
        elif (shown_by_kind := kind_of(sc).feature(o.exchanges, settings.profile)) is not None:
            state, evidence = shown_by_kind  # e.g. prompt reuse: the second answer's cached tokens
        elif first.status is not None and 200 <= first.status < 300:
            state, evidence = "supported", f"answered {first.status}"
            unshown = _not_shown(sc, first, settings)
            if unshown:  # an answer that shows nothing of the feature does not make it supported
                state, evidence = "answered, not shown", f"answered {first.status}, but {unshown}"
        else:
            state, evidence = "unsupported", _answered(first)
        if state == "supported" and not sc.observable:  # e.g. an image to a text-only model, an effort level
            state, evidence = "accepted", f"{evidence}; an answer cannot show it was used"
        out[sc.variant] = {"state": state, "scenario": sc.name, "evidence": evidence}
    for name in unsent or {}:  # a route not served: as its sent scenario would be, its category skipped
        sc = BY_NAME[name]
        if sc.variant and (skip := _skip_reason(sc.needs, caps, settings)):
            out[sc.variant] = {"state": "unsupported", "scenario": sc.name, "evidence": skip}
    return out


def _not_shown(sc: Any, ex: Exchange, settings: Settings) -> str:
    """Why a 2xx answer does not show the variant it was asked for ("" when it does): an empty body; a tool_choice
    other than none answered with no call; a response_format answered with content that is not JSON."""
    if not ex.body or ex.body.isspace():
        return "with an empty body"
    if sc.category not in ("tools", "structured"):
        return ""
    assembled = analyze(ex, settings.profile).assembled
    choices = list(assembled.choices.values())
    if sc.category == "tools":
        choice = (ex.request or {}).get("tool_choice") if isinstance(ex.request, dict) else None
        if choice != "none" and not any(c.tool_calls for c in choices):
            return "no tool call in the answer"
        return ""
    try:
        json.loads(choices[0].content if choices else "")
    except ValueError:
        return "the content is not JSON"
    return ""


def _answered(ex: Exchange) -> str:
    code = (_error_object(ex) or {}).get("code")
    return f"answered {ex.status}" + (f" {code}" if code else "")


def _documented_refusal(ex: Exchange) -> str | None:
    error = _refusal(ex)
    return f"refused: {ex.status} {error['code']}" if error is not None else None


TIMELINE_POINTS = 120


def timeline(arrivals: tuple[tuple[float, int], ...]) -> list[list[float]]:
    """Arrival times and byte counts of a stream, at most ``TIMELINE_POINTS`` of them (first, last and the
    largest gap kept), for the report's timeline."""
    points = list(arrivals)
    if len(points) > TIMELINE_POINTS:
        step = len(points) / TIMELINE_POINTS
        keep = {int(i * step) for i in range(TIMELINE_POINTS)} | {len(points) - 1}
        gaps = [points[i][0] - points[i - 1][0] for i in range(1, len(points))]
        widest = max(range(len(gaps)), key=gaps.__getitem__) + 1
        keep |= {widest - 1, widest}
        points = [points[i] for i in sorted(keep)]
    return [[round(t, 4), n] for t, n in points]


def _unjudged_reason(category: str, ran: set[str], caps: dict[str, dict[str, Any]], settings: Settings) -> str:
    needs = {sc.needs for sc in SCENARIOS if sc.category == category and sc.needs}
    for cap in sorted(n for n in needs if n is not None):
        reason = _skip_reason(cap, caps, settings)
        if reason:
            return reason
    if not any(sc.category == category and sc.name in ran for sc in SCENARIOS):
        return f"no {category} scenario ran"
    return "no exchange of this run could show this rule (it applies to exchanges the server did not produce)"


def token_totals(outcomes: list[Outcome], profile: str) -> dict[str, int]:
    """Completion tokens of a run: ``asked``, the caps its requests set (``uncapped`` counts those that set
    none); ``received``, what the answers used, from their usage where they report it, else counted as the
    content-bearing chunks of the stream (``estimated`` counts those answers)."""
    asked = uncapped = received = estimated = 0
    for outcome in outcomes:
        for ex in outcome.exchanges:
            body = ex.request if isinstance(ex.request, dict) else None
            if body is None or ex.method != "POST" or ex.protocol is None or ex.endpoint == "ollama-pull":
                continue
            options = body.get("options")
            cap = next((body[k] for k in CAP_FIELDS if isinstance(body.get(k), int)), None)
            if cap is None and isinstance(options, dict) and isinstance(options.get("num_predict"), int):
                cap = options["num_predict"]
            if cap is None:
                uncapped += 1
            else:
                asked += max(cap, 0) * (body["n"] if isinstance(body.get("n"), int) and body["n"] > 0 else 1)
            if ex.status is None or not 200 <= ex.status < 300:
                continue
            used, counted = _used(ex, profile)
            received += used
            estimated += counted
    return {"asked": asked, "received": received, "uncapped": uncapped, "estimated": estimated}


def _used(ex: Exchange, profile: str) -> tuple[int, int]:
    """Completion tokens one answer used, and 1 when that is a count of events rather than a reported usage."""
    a = analyze(ex, profile)
    return a.protocol.tokens_used(a) if a.protocol is not None else (0, 1)
