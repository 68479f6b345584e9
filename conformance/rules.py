"""The rulebook, as data: ``conformance/rules.toml`` (chat's rules and those every protocol shares) and each
protocol's ``rules.toml``, read here into ``RULES``. Every check, the CLI's rule selection and the docs table come
from here.

Ids are stable: never renumber a rule, retire it instead. ``source`` names a seed document in
../shared/seeds/ and its section, the WHATWG standard, an RFC, or the public OpenAI API reference;
``refs`` names rows of ../shared/docs/DEVIATIONS.md that show servers getting it wrong.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.capabilities import CAPABILITY_RULES
from conformance.protocols import REGISTRY

RULESET_VERSION = "10"  # bumped whenever a rule is added or retired or its meaning changes; in every report
# 2: TRN-014 (every request gets a response; nothing passes without one), judging caps under TRN-011.
# 3: ERR-017 (bad input is refused within the refusal deadline), ERR-018 (a burst is answered or refused, not
#    queued without a bound); TRN-014 leaves a request cut at the refusal deadline to ERR-017; MOD-002 asks only
#    for the data array 003 §6 reads, MOD-006 (should) for object: list; ERR-014 and STR-004 advisory (003 §5: a
#    429's Retry-After "may" be present; §2.6: a schema without strict binds nothing).
# 4: the dialect facts of issue 12: TRN-015/016 (OpenAI-Request-ID, X-Grammar-Constraints), CHK-020 (AFM profile
#    events), TOOL-019/020/021 (union schemas, the round trip accepted, a custom tool), RSN-009/010, IMG-001..003, USG-012 (prompt
#    reuse), MOD-007/008 (capabilities, /health), OLL-011..014 (length, X-Request-ID, /api/pull, failures);
#    CAN-004 also for a completed and a chatcmpl id; STR-003 leaves a declared downgrade to STR-004.
# 5: what real servers showed (issue 15): TRN-017 (an HTTP/1.1 request answered in HTTP/1.1), FIN-010 (length
#    only at the cap), FIN-011 (generation ends at the stop sequence), ERR-021 (no 5xx on a valid request), ERR-022
#    (a JSON body labelled text/plain refused), ERR-023 (error.code is not the HTTP status), MOD-009 (the model list
#    is not empty); TRN-006 judged on a scenario of its own (request-id).

# 7: the Responses API (issue 22): RSP-001..023; rules declare where they apply (protocol http, sse or a protocol's
#    name) and the registry decides; the generic SSE framing and stream-header rules judge every SSE protocol.
# 8: agents (issue 46): AGT-001 (the requests real agents send are answered: client readiness), TRN-019 (no long
#    silence in a stream, the longest reported).
# 9: one-protocol servers (issue 61): chat's route is a capability (TRN-020, --expect chat); a server that does not
#    serve a protocol's route gets none of its scenarios, and a refusal that names no model never blames the model.
# 10: the Completions API (issue 61): CMP-001..015 and its three capabilities, all in its package; a run of
#     --protocol judges no other protocol's capability rule. Depth on every API (issue
#     59): ERR-027 (error.type a kind, not a class name), RSP-029..031 (markup, the fields OpenAI always sends, a
#     stored response continued), MSG-033..036 (markup, a prefill, thinking alone, a stop reported as end_turn),
#     MSG-014 asks for stop_sequence, RSP-032 (parity), RSP-033 and MSG-037 (keys beyond the reference), TRN-021
#     (a body cut by the server); a refusal whose message names its cause
#     skips the rules that would blame the request's feature.
# the categories: chat's and the HTTP ones, then one per other protocol (its name, from the registry), then fuzz
CATEGORIES = (
    "transport", "framing", "chunks", "finish", "usage", "tools", "reasoning", "structured",
    "errors", "images", "cancellation", "models", *(name for name in REGISTRY if name != "chat"), "agents", "fuzz",
)
LEVELS = ("must", "should", "advisory")
APPLIES = ("stream", "non-stream", "both")

_NAMED = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
AFM = "000_9adc55f728b3a6e5.txt"  # the seed documents' files (rules.toml's sources name them too)
STRICT = "001_b86e68556766b6cb.txt"
NPU = "002_018dc7b61835a212.txt"
WIRE = "003_b25f797ba83b2388.txt"
# how users read a seed document's name: they cannot open the project's seed files, so a citation names its title
SEED_TITLES = {
    AFM: "AFM's streaming documentation (a local server's OpenAI-shaped SSE)",
    STRICT: "OPENAI_SERVER.md, a strict local OpenAI-compatible server's guide",
    NPU: "npu_proxy's STREAMING.md (OpenAI SSE and Ollama NDJSON)",
    WIRE: "\"Wire protocol: OpenAI-compatible Chat Completions\" (notes observed across LM Studio, mlx-lm, llama.cpp, "
          "vLLM and Azure OpenAI)",
}


@dataclass(frozen=True, slots=True)
class Rule:
    """One checkable fact."""

    id: str
    title: str
    category: str
    level: str
    applies: str
    source: str
    refs: tuple[str, ...] = ()
    # where it applies, decided by the registry (checks.evaluate), never by the check body: a protocol's name
    # (chat, ollama, responses), "sse" for every protocol framed as an event stream, "http" for any exchange
    protocol: str = "chat"


WHERE = ("http", "sse", *REGISTRY)
# The rules every SSE protocol shares: the stream's media type and headers, and the WHATWG framing. The [DONE]
# terminator and the event types are chat's (the Responses API names its events and has its own end).
SSE_RULES = frozenset({"TRN-001", "TRN-002", "TRN-003", "TRN-004", "TRN-005", "TRN-009", "TRN-012", "TRN-018",
                       "SSE-001", "SSE-005", "SSE-006", "SSE-007", "SSE-009", "SSE-010", "SSE-011", "SSE-012",
                       "SSE-013", "SSE-014", "SSE-015", "SSE-016", "SSE-017", "TRN-019"})
CHAT_RULES = frozenset({"SSE-002", "SSE-003", "SSE-004", "SSE-008", "TRN-015", "ERR-008", "ERR-009", "ERR-010"})
HTTP_CATEGORIES = ("transport", "errors", "models", "cancellation", "agents", "fuzz")


def _where(id: str, category: str) -> str:
    if id in CAPABILITY_RULES.values():
        return "http"  # a capability the user expects is judged on its probe, whatever the route answered
    if category in REGISTRY:  # a protocol's own category (ollama, responses)
        return category
    if id in CHAT_RULES:
        return "chat"
    if id in SSE_RULES:
        return "sse"
    return "http" if category in HTTP_CATEGORIES else "chat"


def groups(rulebook: Iterable[Rule] | None = None) -> list[tuple[str, list[Rule], str]]:
    """The rulebook (or ``rulebook``) by category, in order: each category's rules and the protocols they apply to
    (for its tables)."""
    every = list(_loaded() if rulebook is None else rulebook)
    out = []
    for category in CATEGORIES:
        rules = [r for r in every if r.category == category]
        out.append((category, rules, ", ".join(sorted({r.protocol for r in rules}))))
    return out


def cite(source: str) -> str:
    """A rule's source as a user reads it: each seed document named by its title in words, never by its file."""
    for name, title in SEED_TITLES.items():
        source = source.replace(name, title)
    return source


def _r(id: str, category: str, level: str, applies: str, title: str, source: str,
       *refs: str) -> Rule:
    return Rule(id, title, category, level, applies, source, refs, _where(id, category))


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML data file of the package (the rule tables, the seed map, the parity table)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    doc: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    return doc


def _tables() -> list[tuple[Path, str]]:
    """The rule tables and their category: the core's (each row names its own: ""), then each registered protocol's
    that brings one (its name)."""
    here = Path(__file__).parent
    tables = [(here / "rules.toml", ""), *((here / "protocols" / name / "rules.toml", name) for name in REGISTRY)]
    return [(path, category) for path, category in tables if path.is_file()]


def _table(path: Path) -> dict[str, Any]:
    """A rule table, its sources' names resolved: ``{NAME}`` in a source stands for the text its ``[sources]`` table
    gives that name (which may name an earlier source)."""
    doc = read_toml(path)
    sources: dict[str, str] = {}
    for name, text in doc.get("sources", {}).items():
        sources[name] = _NAMED.sub(lambda m: sources.get(m.group(1), m.group(0)), text)
    for row in doc.get("rule", []):
        row["source"] = _NAMED.sub(lambda m: sources.get(m.group(1), m.group(0)), row["source"])
    doc["sources"] = sources
    return doc


ROW_KEYS = frozenset({"id", "category", "level", "applies", "title", "source", "refs"})


def _rules(path: Path, category: str = "") -> tuple[Rule, ...]:
    """The rules of a table: the core's (each row names its category) or a protocol's (its category is its name). A
    key the table does not know is an error, not a field quietly dropped."""
    rows = _table(path)["rule"]
    for row in rows:
        if not ROW_KEYS >= set(row):
            raise ValueError(f"{path}: {row.get('id')} has unknown keys {sorted(set(row) - ROW_KEYS)}")
    return tuple(_r(row["id"], row.get("category") or category, row["level"], row["applies"], row["title"],
                    row["source"], *row.get("refs", ())) for row in rows)


# the rulebook: conformance/rules.toml (chat's rules and those every protocol shares), then each protocol's own; read
# when first asked for (``__getattr__``): `--version` counts the rules without parsing them (``rule_count``)
RULES: tuple[Rule, ...]
RULES_BY_ID: dict[str, Rule]


def _loaded() -> tuple[Rule, ...]:
    """The rulebook, read once."""
    if "RULES" not in globals():
        rules = tuple(rule for path, category in _tables() for rule in _rules(path, category))
        globals().update(RULES=rules, RULES_BY_ID={rule.id: rule for rule in rules})
    return globals()["RULES"]  # type: ignore[no-any-return]


def __getattr__(name: str) -> Any:
    if name in ("RULES", "RULES_BY_ID"):
        _loaded()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rule_count() -> int:
    """How many rules the rulebook holds, counted from its tables' ``[[rule]]`` headers without parsing them (for
    `--version`; tests/test_rules.py holds it equal to ``len(RULES)``)."""
    return sum(path.read_bytes().count(b"\n[[rule]]\n") for path, _ in _tables())
