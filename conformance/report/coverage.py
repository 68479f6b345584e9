"""The seed-coverage map: every testable fact of the four seed documents (../shared/seeds/), in a few words
of our own, with the rules that judge it, the live scenarios that show it and the fixtures that pin it.

``cue`` is a short verbatim fragment of the seed, so the map can be checked against the text it cites
(tests/test_coverage.py); ``client`` names what ``conformance fuzz-client`` compares for a fact about
clients; ``dialect`` marks a fact only a dialect's profile judges (the reference report, run under the
openai profile, does not show it, so a fixture must). ``NOT_JUDGED`` lists the seeds' statements that no
server or client verdict can test, each with the reason. ``python -m conformance.report.coverage`` prints
it; the docs site's reference page is generated from ``render()`` (conformance.docsite). The map itself is data:
``coverage.toml`` beside this module.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from conformance.rules import RULES_BY_ID, read_toml

SEEDS = {"000": "000_9adc55f728b3a6e5.txt", "001": "001_b86e68556766b6cb.txt", "002": "002_018dc7b61835a212.txt",
         "003": "003_b25f797ba83b2388.txt"}
TITLES = {"000": "AFM (streaming lifecycle, tools, cancellation, profiling)",
          "001": "A strict local OpenAI server (TurboFieldfare's OPENAI_SERVER.md)",
          "002": "npu_proxy STREAMING.md (SSE and Ollama NDJSON)",
          "003": "Wire protocol: OpenAI-compatible Chat Completions (svir)"}


@dataclass(frozen=True)
class Fact:
    seed: str
    section: str
    cue: str  # verbatim from the seed
    fact: str  # our words
    rules: tuple[str, ...]
    live: tuple[str, ...] = ()  # scenarios
    fixtures: tuple[str, ...] = ()  # folder/name under fixtures/
    client: tuple[str, ...] = ()  # what fuzz-client compares (conformance.fuzz.client_fuzz.COMPARED)
    dialect: str = ""  # the profile that judges it, when only a dialect's profile does


def _map() -> dict[str, Any]:
    """conformance/report/coverage.toml: the facts (``[[fact]]``) and the statements not judged (``[[not_judged]]``)."""
    doc = read_toml(Path(__file__).with_name("coverage.toml"))
    for table, known in KEYS.items():  # a misspelt key is an error, never a field quietly dropped
        for row in doc[table]:
            if not known >= set(row):
                raise ValueError(f"coverage.toml: a [[{table}]] with unknown keys {sorted(set(row) - known)}")
    return doc


KEYS = {"fact": {"seed", "section", "cue", "fact", "rules", "live", "fixtures", "client", "dialect"},
        "not_judged": {"seed", "statement", "why"}}


_MAP = _map()
FACTS: tuple[Fact, ...] = tuple(
    Fact(f["seed"], f["section"], f["cue"], f["fact"], tuple(f["rules"].split()), tuple(f.get("live", "").split()),
         tuple(f.get("fixtures", "").split()), tuple(f.get("client", "").split()), f.get("dialect", ""))
    for f in _MAP["fact"])
# The seeds' statements no server or client verdict can test, and why.
NOT_JUDGED: tuple[tuple[str, str, str], ...] = tuple((n["seed"], n["statement"], n["why"]) for n in _MAP["not_judged"])


# The seeds' example streams that fail a must or should rule as their bytes stand, the rules they fail and why: each
# abbreviates what another seed or OpenAI's schema requires of every stream. A dialect's own shape is not listed: it
# passes under its profile, in a twin fixture of the same bytes (tests/test_coverage.py checks both).
ABBREVIATED: dict[str, tuple[str, str]] = {
    "seeds/afm-lifecycle": ("CHK-004 CHK-007", "AFM's lifecycle example leaves out model and the choice index; seed "
                            "003 §3.2 keeps model on every chunk and gives the one choice index 0"),
    "seeds/afm-tool-call": ("CHK-003 CHK-004 CHK-007 CHK-010 CHK-017 FIN-001 SSE-002",
                            "AFM shows two tool-call deltas only: no id, model, index or role, and neither the finish "
                            "nor [DONE], which its own lifecycle requires"),
    "seeds/npu-openai": ("CHK-003 CHK-004 CHK-007 CHK-017 FIN-005",
                         "npu_proxy's framing example shows choices only: no id, model, choice index or null "
                         "finish_reason, which seed 003 §3.2 and OpenAI's chunk schema give every chunk"),
    "seeds/npu-error-terminal": ("CHK-003 CHK-004 CHK-007 CHK-017 FIN-005",
                                 "the same abbreviated chunks as npu_proxy's framing example, before its error"),
    "seeds/cut-before-done": ("FIN-001 SSE-002 TOOL-006 TOOL-008 USG-002",
                              "seed 003's recorded example cut after its second event, as its text describes: the "
                              "cut is what the fixture shows"),
}


@cache
def _judged(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """The rules a fixture fails and the ones it passes, judged as the offline tests judge it."""
    from conformance.checks import evaluate
    from conformance.exchange import analyze
    from conformance.fixtures import FIXTURES_DIR, load

    fx = load(FIXTURES_DIR / f"{name}.json")
    verdicts = evaluate(analyze(fx.exchange, fx.profile))
    return (frozenset(v.rule.id for v in verdicts if v.outcome == "failed"),
            frozenset(v.rule.id for v in verdicts if v.outcome == "passed"))


def examples(fact: Fact) -> tuple[list[str], list[str]]:
    """The fact's counterexamples (fixtures that fail one of its rules) and legal examples (fixtures that fail none
    of them and pass at least one)."""
    counter, legal = [], []
    for name in fact.fixtures:
        failed, passed = _judged(name)
        if failed & set(fact.rules):
            counter.append(name)
        elif passed & set(fact.rules):
            legal.append(name)
    return counter, legal


def _failing(name: str) -> frozenset[str]:
    """The must and should rules a fixture fails."""
    return frozenset(r for r in _judged(name)[0] if RULES_BY_ID[r].level != "advisory")


def seed_examples() -> list[tuple[str, str, str]]:
    """Every seed example fixture that fails a must or should rule: (fixture, rules, why)."""
    from conformance.fixtures import FIXTURES_DIR, load

    seeds = sorted(f"seeds/{p.stem}" for p in (FIXTURES_DIR / "seeds").glob("*.json"))
    loaded = {n: load(FIXTURES_DIR / f"{n}.json") for n in seeds}
    body = {n: fx.body_path.read_bytes() for n, fx in loaded.items()}
    rows = []
    for name in seeds:
        failing = _failing(name)
        if not failing:
            continue
        if name in ABBREVIATED:
            rows.append((name, " ".join(sorted(failing)), ABBREVIATED[name][1]))
            continue
        fx = loaded[name]
        twins = [n for n, t in loaded.items() if t.profile != fx.profile and body[n] == body[name]
                 and not _failing(n)]
        twins.sort(key=lambda n: not (n.startswith(name) or name.startswith(n)))  # its own -profile twin first
        why = (f"a dialect's own shape: passes under profile {loaded[twins[0]].profile} ({twins[0]})" if twins
               else "UNEXPLAINED")
        rows.append((name, " ".join(sorted(failing)), why))
    return rows


def render() -> str:
    """The seed-coverage page of the docs site (reference/seed-coverage.md)."""
    out = ["# Seed coverage", "",
           "Every testable fact of the four documents this project was built from (the seeds: their titles below), in",
           "a few words of our own, with the",
           "rules that judge it, the live scenarios that show it and the fixtures that pin it. Generated from",
           "`conformance/report/coverage.py` when the site is built. Every claim is executable:",
           "`tests/test_coverage.py` judges each fact's fixtures and requires a counterexample (*fails on*: a fixture",
           "that fails one of the fact's rules, at the level shown, and lists it among its expected failures) and a",
           "legal example (*passes on*: a fixture that fails none of them and passes one); it also checks that each",
           "cue is in its seed, that every rule, scenario and fixture exists, and that the published reference report",
           "judged each live fact in its scenario. *Client* names what `conformance fuzz-client` compares; *dialect*",
           "names the profile that judges a dialect's own fact.", "",
           f"{len(FACTS)} facts: " + ", ".join(f"seed {s} {sum(1 for f in FACTS if f.seed == s)}" for s in SEEDS)
           + f"; {len(NOT_JUDGED)} statements not judged (at the end, with the reason).", ""]
    for seed, title in TITLES.items():
        out += [f"## Seed {seed}: {title}", "",
                "| # | section | fact | rules (level) | live | fails on | passes on | client | dialect |",
                "|---|---|---|---|---|---|---|---|---|"]
        for n, f in enumerate((f for f in FACTS if f.seed == seed), 1):
            counter, legal = examples(f)
            cells = [f"{seed}-{n:02d}", f.section, f.fact,
                     " ".join(f"{r} ({RULES_BY_ID[r].level})" for r in f.rules), " ".join(f.live) or "—",
                     "<br>".join(counter) or "—", "<br>".join(legal) or "—", " ".join(f.client) or "—",
                     f.dialect or "—"]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    out += ["## The seeds' own example streams", "",
            "Each example stream of the seeds is a fixture under `seeds/`, judged as its bytes stand; the others pass",
            "every must and should rule. Seed 003's chunk shape and recorded example carry only `id`, `model` and",
            "`choices`: legal, so a missing `object` or `created` is only CHK-021's advisory note. What a seed",
            "documents as its dialect's own shape passes under that dialect's profile, in a twin fixture of the same",
            "bytes, and is judged as a deviation under `openai`. Where a seed abbreviates for display, the rules that",
            "refuse the abbreviation are listed with the reason (`tests/test_coverage.py` requires a reason for every",
            "row).", "", "| fixture | fails (must/should) | why |", "|---|---|---|"]
    out += [f"| {name} | {rules} | {why} |" for name, rules, why in seed_examples()]
    out.append("")
    out += ["## Not judged", "", "| seed | statement | why |", "|---|---|---|"]
    for seed, cue, why in NOT_JUDGED:
        out.append(f"| {seed} | {' '.join(cue.split())} | {why} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
