"""json_text writes valid UTF-8 whatever a server sent: its fast path (an ASCII text with no DEL) gives what the
escaping pattern gives."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conformance.wire.untrusted import _JSON_UNSAFE, json_text

TEXT = st.text(st.one_of(st.characters(), st.sampled_from(["\x7f", "\x85", "\u202e", "\ud800", "\udfff", "a", "\\"])))


@settings(max_examples=300, deadline=None)
@given(doc=st.one_of(TEXT, st.lists(TEXT, max_size=4), st.dictionaries(TEXT, TEXT, max_size=3)))
@example(doc="ascii and DEL \x7f")  # all ASCII, one character to escape
@example(doc={"a": "b\\n", "c": ["\u00e9"]})
def test_json_text_escapes_what_the_pattern_escapes_and_reads_back(doc: object) -> None:
    plain = json.dumps(doc, ensure_ascii=False)
    assert json_text(doc) == _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", plain)
    assert json.loads(json_text(doc)) == doc
    json_text(doc).encode("utf-8")  # no lone surrogate left: it encodes
