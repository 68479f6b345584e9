"""Framing: the event stream itself, judged by the strict WHATWG decoder's records."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.checks.conditions import chat_sse, complete
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.wire.sse import SSEStats


def _stats(a: Analysis) -> SSEStats:
    assert a.stats is not None
    return a.stats


@check("SSE-001", "SSE-005", "SSE-007", "SSE-015", "SSE-017", when=(chat_sse,))
def decoder_records(a: Analysis) -> Iterator[Finding]:
    stats = _stats(a)
    if stats.invalid_utf8:
        yield finding(a, "SSE-001", f"{stats.invalid_utf8_count} invalid UTF-8 sequence(s)",
                      "UTF-8 only", offset=stats.invalid_utf8[0])
    if stats.tail_has_data and complete(a):
        yield finding(a, "SSE-005", "an event with data but no blank line before the end",
                      "every event ended by a blank line (a strict client never dispatches it)",
                      offset=stats.tail_offset)
    if stats.payload_fields:
        offset, name = stats.payload_fields[0]
        yield finding(a, "SSE-007", f"{stats.payload_field_count} line(s) carrying a payload in unknown field "
                      f"{name!r}", "the payload in data:", offset=offset,
                      remedy="Clients ignore unknown fields, so whatever the line carried is lost.")
    others = [(o, n) for o, n in stats.unknown_fields if (o, n) not in stats.payload_fields]
    if stats.unknown_field_count > stats.payload_field_count and others:
        offset, name = others[0]
        yield finding(a, "SSE-017", f"{stats.unknown_field_count - stats.payload_field_count} line(s) with unknown "
                      f"field {name!r}", "data:, event:, id:, retry: or a comment", offset=offset,
                      remedy="WHATWG parsers ignore them; a hand-written client may not.")
    if stats.invalid_retry:
        yield finding(a, "SSE-015", f"{stats.invalid_retry} retry: field(s) that are not ASCII digits",
                      "retry: with digits only")


@check("SSE-002", "SSE-003", "SSE-004", when=(chat_sse,))
def terminator(a: Analysis) -> Iterator[Finding]:
    w = a.watch
    done = w.done
    if done is None and not w.error_count and complete(a):
        last = w.last_index
        yield finding(a, "SSE-002", "a stream that ends without data: [DONE]", "data: [DONE] last",
                      event=last, offset=None if last is not None else 0)
    if done is not None:
        if w.after_done:
            yield finding(a, "SSE-003", f"{w.after_done} event(s) after [DONE]", "nothing after [DONE]",
                          event=w.after_done_first)
        end = a.assembled.done_end
        after_done = 0 if end is None else _stats(a).total_bytes - end
        if after_done:
            yield finding(a, "SSE-004", f"{after_done} byte(s) after the [DONE] event",
                          "the body closes after [DONE]", offset=end)


@check("SSE-006", "SSE-008", when=(chat_sse,))
def payloads(a: Analysis) -> Iterator[Finding]:
    w = a.watch
    if w.invalid is not None:
        p = w.invalid
        yield finding(a, "SSE-006", f"data {short(p.value, 60)} ({p.problem})", "JSON or [DONE]", event=p.index)
    if w.odd_type is not None:
        event, kind = w.odd_type
        yield finding(a, "SSE-008", f"event: {kind}", "no event field, message or error",
                      event=event, remedy="Clients drop events of other types.")


@check("SSE-009", "SSE-010", "SSE-011", "SSE-012", "SSE-013", "SSE-014", "SSE-016", when=(chat_sse,))
def client_hazards(a: Analysis) -> Iterator[Finding]:
    stats = _stats(a)
    if stats.comments:
        yield finding(a, "SSE-009", f"{stats.comments} comment line(s)", "no comments, for fragile clients",
                      offset=stats.comment_offsets[0])
    if stats.data_without_space:
        yield finding(a, "SSE-010", f"{stats.data_without_space} data: line(s) without a space",
                      "data: followed by one space", offset=stats.data_without_space_offset)
    if stats.crlf or stats.cr:
        yield finding(a, "SSE-011", f"line ends {stats.line_ending_styles}", "LF only")
    if stats.id_fields or stats.retry_fields:
        yield finding(a, "SSE-012", f"{stats.id_fields} id: and {stats.retry_fields} retry: field(s)",
                      "no id: or retry: fields")
    if stats.bom:
        yield finding(a, "SSE-013", "a byte-order mark at byte 0", "no BOM", offset=0)
    multi = a.watch.multi_data
    if multi is not None:
        yield finding(a, "SSE-014", f"an event with {multi[1]} data: lines", "one data: line per event",
                      event=multi[0])
    if len(stats.line_ending_styles) > 1:
        yield finding(a, "SSE-016", f"mixed line ends {stats.line_ending_styles}", "one style throughout")
