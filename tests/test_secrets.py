"""The key masking's two fast paths (issue 25) find exactly what the literal-by-literal reading finds: a run of identical
events skipped once it stops changing what is kept, and the forms looked for as they are in a body with no escape."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.secrets import Scrubber, _Channels, _patterns, _plain_spans, forms

KEYS = ("sk-proj-Hostile0Echo1Key2Secret3", "sk-proj-abababababab", "sk-cccccccccccc")


def masked(spans: list[tuple[int, int]]) -> set[int]:
    return {i for start, end in spans for i in range(start, end)}


def event(field: str, text: str) -> bytes:
    doc = {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {field: text}, "finish_reason": None}]}
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


@st.composite
def bodies(draw: st.DrawFn) -> tuple[str, bytes]:
    """Runs of identical events (short and longer than a form), their text cut from the key, a character of it, a
    character no form holds, or a mix: runs that build a key, keep one, or break every chain."""
    key = draw(st.sampled_from(KEYS))
    pieces = st.one_of(
        st.integers(0, len(key) - 1).flatmap(lambda a: st.integers(a + 1, len(key)).map(lambda b: key[a:b])),
        st.sampled_from(["a", "c", "b", "x", " ", "ab", "ba", "\u00e9", "zz", "c\"c"]))
    runs = draw(st.lists(st.tuples(st.sampled_from(["content", "arguments", "id"]), pieces,
                                   st.sampled_from([1, 2, 3, 40, 41, 80])), min_size=1, max_size=8))
    body = b"".join(event(field, text) * count for field, text, count in runs)
    if draw(st.booleans()):
        body = body.replace(b"\n\n", b"\r\n\r\n")
    return key, body + b"data: [DONE]\n\n"


@settings(max_examples=300, deadline=None)
@given(case=bodies())
def test_a_run_of_identical_events_is_masked_as_when_read_event_by_event(case: tuple[str, bytes]) -> None:
    key, body = case
    every = _Channels(forms(key))._literals(body, 0)  # every literal read, in order: the reference
    assert masked(_Channels(forms(key)).feed(body, 0)) == masked(every)


@settings(max_examples=300, deadline=None)
@given(case=bodies(), escaped=st.booleans(), at=st.integers(0, 10_000))
def test_the_forms_found_as_they_are_are_what_the_pattern_finds(case: tuple[str, bytes], escaped: bool,
                                                                 at: int) -> None:
    key, body = case
    echo = "".join(f"\\u{ord(c):04x}" for c in key).encode() if escaped else key.encode()
    at = min(at, len(body))
    body = body[:at] + echo + key[8:].encode() + body[at:]
    scrub = Scrubber([key])
    pattern = _patterns(scrub.forms)
    assert pattern is not None
    found = [(m.start(), m.end()) for m in pattern[1].finditer(body)]
    assert _plain_spans(pattern[1], scrub._literals, body) == found


def test_a_flood_of_one_chunk_is_read_in_a_few_events() -> None:
    """A flood of one chunk is masked reading about twice ``keep`` of its events (until they stop changing what is
    kept, then the last ``keep``), and a key the repeats build is still found in every one of them."""
    flood = event("content", "a") * 100_000
    channels = _Channels(forms(KEYS[0]))
    calls = []
    original = channels._literals
    channels._literals = lambda data, base: calls.append(len(data)) or original(data, base)  # type: ignore[method-assign]
    assert channels.feed(flood, 0) == []
    assert sum(calls) <= (2 * channels.keep + 4) * len(event("content", "a"))  # of 100,000
    built = event("content", "ab") * 1000  # sk-proj-abab...: the key completed again and again
    scrub = Scrubber([KEYS[1]])
    out = scrub.data(b'data: {"content":"sk-proj-"}\n\n' + built)
    assert out.count(b'"content": "**"') == 1000 and b'"ab"' not in out


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from((*KEYS, "sk-proj-with/a/slash/or/two")), before=st.text(max_size=40),
       after=st.text(max_size=40),
       echo=st.sampled_from(["none", "plain", "distinct", "escaped", "one-escaped", "slash", "newline"]))
def test_text_masks_what_the_pattern_finds_with_or_without_a_backslash(key: str, before: str, after: str,
                                                                       echo: str) -> None:
    # text() returns at once when there is no backslash and no form as it is: the pattern would find nothing there
    middle = {"none": "", "plain": key, "distinct": key[8:], "escaped": "".join(f"\\u{ord(c):04X}" for c in key),
              "one-escaped": key[:-1] + f"\\u{ord(key[-1]):04x}", "slash": key.replace("/", "\\/").replace("-", "\\/"),
              "newline": key[:5] + "\\n" + key[5:]}[echo]
    value = before + middle + after
    scrub = Scrubber([key])
    pattern = _patterns(scrub.forms)
    assert pattern is not None
    assert scrub.text(value) == pattern[0].sub(lambda m: "*" * len(m.group()), value)
    if echo in ("plain", "escaped", "one-escaped") or (echo == "slash" and "/" in key):
        assert scrub.text(value) != value
