"""The streaming judge's view of a chat stream: every event and payload seen once, as it is decoded, keeping only what
the rules read (issue 25).

Theory of operation. The rules of a chat stream ask questions of the whole event sequence: the first chunk whose id
changed, whether a role came twice, where the first finish was, what followed ``[DONE]``. Walking the sequence once per
rule cost time in proportion to rules x events, and holding every event cost memory in proportion to the body. A
``ChatWatch`` is fed each event and each classified payload in stream order, in the same pass that decodes and
assembles them, and keeps, per question, the answer so far: the first offending event (its index, its offset for the
excerpt, and the detail the message needs), counters, and the few payloads a rule quotes (the first and last usage
chunk, the error payloads, the profile events: each list bounded). Its memory does not grow with the number of events
(the per-choice and per-call tables grow with the choices and calls a stream names, bounded by ``MAX_TRACKED``); the
checks in ``conformance.checks`` read it and give the verdicts the event walks gave.

An envelope identical to the one before it (the same keys, id, model, object and created: the common case of a long
stream) answers every envelope question as its predecessor did, so it is compared once and not judged again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from hashlib import blake2b
from typing import Any

from conformance.protocols.chat.payloads import OUTPUT_FIELDS, PROFILE_KEYS, Payload
from conformance.protocols.chat.sequence import (
    CHOICE_TABLE,
    STREAM_TABLE,
    ChoiceEvent,
    ChoiceState,
    StreamEvent,
    StreamState,
    Violation,
    choice_event,
    stream_event,
)
from conformance.protocols.event_watch import EventWatch

KNOWN_CHUNK_KEYS = frozenset({
    "id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier",
    "obfuscation", "prompt_filter_results", "prompt_annotations",
})
TEXT_KEYS = ("content", "refusal", "reasoning_content", "reasoning")
FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
MS_THRESHOLD = 100_000_000_000  # seconds since 1970 stay below this until the year 5138
MAX_KEPT = 16  # payloads kept per list (errors, profile events): the rules quote the first ones and count the rest
MAX_TRACKED = 4096  # choice and call indices tracked; a stream naming more is judged on the first ones


@dataclass(slots=True)
class Constant:
    """A key that must be the same non-empty string on every chunk (id, model): the first break."""

    first: Any = None
    bad: tuple[int, Any] | None = None  # (event, value): not a non-empty string
    changed: tuple[int, Any] | None = None  # (event, value): differs from the first

    def see(self, event: int, value: Any) -> None:
        if self.bad is not None or self.changed is not None:
            return
        if not isinstance(value, str) or not value:
            self.bad = (event, value)
        elif self.first is None:
            self.first = value
        elif value != self.first:
            self.changed = (event, value)


@dataclass(slots=True)
class Created:
    """The created field: the first non-integer or millisecond value, and the first changes a clock could not make."""

    first: Any = None
    stop: tuple[int, str, Any] | None = None  # (event, "type" | "ms", value): the walk ends here
    changed: tuple[int, Any] | None = None  # the first change of any size
    jumped: tuple[int, Any] | None = None  # the first change backward or by more than a second

    def see(self, event: int, value: Any) -> None:
        if self.stop is not None:
            return
        if not isinstance(value, int) or isinstance(value, bool):
            self.stop = (event, "type", value)
        elif value >= MS_THRESHOLD:
            self.stop = (event, "ms", value)
        elif self.first is None:
            self.first = value
        elif value != self.first:
            if self.changed is None:
                self.changed = (event, value)
            if self.jumped is None and not 0 <= value - self.first <= 1:
                self.jumped = (event, value)


@dataclass(slots=True)
class ChoiceTrack:
    """One choice index's state across the stream."""

    deltas: int = 0
    roles: int = 0
    state: ChoiceState = ChoiceState.IDLE
    finishes: list[int] = field(default_factory=list)  # the first two events that finished it
    finish_count: int = 0
    answered: bool = False  # content that is not whitespace has arrived (RSN-007)
    # CHK-012: the length of the text so far; the text as a digest of its start (None: nothing hashed yet) and the
    # pieces since (fewer than HASH_AT: the answer keeps the text, a second copy here would double what judging holds)
    text_len: int = 0
    hashed: blake2b | None = None
    pieces: list[str] = field(default_factory=list)
    last: str = ""  # the last piece


@dataclass(slots=True)
class ChatWatch(EventWatch):
    """What the rules read of a chat event stream, fed in order (see the module's docstring)."""

    other: Payload | None = None  # the first payload that is no chunk (CHK-001)
    profile: Payload | None = None  # the first profile event
    profiles: list[Payload] = field(default_factory=list)  # payloads with a profile key (CHK-020), bounded
    profile_count: int = 0
    last_plain_chunk: int = -1  # the last chunk without a profile key
    annotation: Payload | None = None
    annotation_finishes: dict[int, list[tuple[int, Any]]] = field(default_factory=dict)
    annotation_bad: tuple[int, Any] | None = None  # FIN-002 on an annotation's finish (profile azure)
    annotation_bad_but_cancelled: tuple[int, Any] | None = None
    prompt_filter: int | None = None
    errors: list[Payload] = field(default_factory=list)
    error_count: int = 0
    after_error: int = 0  # payloads after the first error, [DONE] aside, and the first
    after_error_first: int | None = None
    first_output: int | None = None  # the first chunk that carries output
    output_chunks: int = 0
    usage_count: int = 0
    usage_first: Payload | None = None
    usage_last: Payload | None = None
    usage_with_choices: int | None = None
    first_chunk: Payload | None = None
    envelope_first: tuple[int, Any] | None = None  # (event, model) of the first chunk (CHK-017)
    missing_keys: tuple[int, list[str]] | None = None  # CHK-021
    bad_object: tuple[int, Any] | None = None  # CHK-002
    ids: Constant = field(default_factory=Constant)
    models: Constant = field(default_factory=Constant)
    created: Created = field(default_factory=Created)
    empty_choices: int | None = None  # CHK-014: choices [] without usage
    unknown_keys: tuple[int, list[str]] | None = None  # CHK-015
    empty_chunk: int | None = None  # CHK-016
    bad_index: tuple[int, Any] | None = None  # CHK-007
    indices: set[int] = field(default_factory=set)
    bad_delta: tuple[int, Any] | None = None  # CHK-008: a choice whose delta is no object
    role_problem: tuple[int, Any, int, int] | None = None  # CHK-009: (event, role, its count, choice)
    no_role: tuple[int, Any] | None = None  # CHK-010: (event, delta)
    bad_text: tuple[int, str, Any] | None = None  # CHK-011
    repeated: tuple[int, int] | None = None  # CHK-012: (event, characters repeated)
    no_finish_key: tuple[int, Any] | None = None  # FIN-005
    finish_with_delta: tuple[int, list[str]] | None = None  # FIN-004
    bad_finish: tuple[int, Any] | None = None  # FIN-002: the first reason outside the enum
    bad_finish_but_cancelled: tuple[int, Any] | None = None  # ... and outside it with "cancelled" allowed
    late_reasoning: int | None = None  # RSN-007
    choices: dict[int, ChoiceTrack] = field(default_factory=dict)
    stream_state: StreamState = StreamState.OPEN
    after_finish: Violation | None = None  # the first choice violation in state finished (FIN-003)
    usage_before_finish: Violation | None = None  # the first stream violation: a finish after usage (USG-003)
    bad_calls: tuple[int, Any] | None = None  # TOOL-001: tool_calls that is no array
    bad_piece: tuple[int, Any] | None = None  # TOOL-001: a piece without an integer index
    call_changed: tuple[int, int, Any, Any, Any, Any] | None = None  # TOOL-015
    call_first: dict[int, tuple[Any, Any]] = field(default_factory=dict)
    call_pieces: dict[int, int] = field(default_factory=dict)
    call_ids: dict[int, Any] = field(default_factory=dict)  # the first id each call was sent with
    pieces: int = 0
    bad_arguments: tuple[int, Any] | None = None  # TOOL-007
    _envelope: Any = None
    template_role: bool = False  # the template-path chunks name the role too (a server that sends it on every chunk)

    def mark(self, p: Payload) -> int:
        self.at[p.index] = p.offset
        return p.index

    def payload(self, p: Payload) -> None:
        """One classified payload, in stream order."""
        kind, value = p.kind, p.value
        if kind == "done":
            if self.done is None:
                self.done = self.mark(p)
        self.problem(p)
        if self.errors and kind != "done":
            self.after_error += 1
            if self.after_error_first is None:
                self.after_error_first = self.mark(p)
        if kind == "error":
            self.error_count += 1
            if len(self.errors) < MAX_KEPT:
                self.errors.append(p)
                self.mark(p)
        elif kind == "other" or (kind == "chunk" and not isinstance(value.get("choices"), list)):
            if self.other is None:
                self.other = p
                self.mark(p)
        elif kind == "profile" and self.profile is None:
            self.profile = p
            self.mark(p)
        elif kind == "annotation":
            self._annotation(p)
        elif kind == "prompt_filter" and self.prompt_filter is None:
            self.prompt_filter = self.mark(p)
        profiled = isinstance(value, dict) and any(k in value for k in PROFILE_KEYS)
        if profiled:
            self.profile_count += 1
            if len(self.profiles) < MAX_KEPT:
                self.profiles.append(p)
                self.mark(p)
        self._sequence(p)
        if kind == "chunk":
            if not profiled:
                self.last_plain_chunk = p.index
            self._chunk(p)

    def repeat(self, index: int, offset: int, text: str) -> None:
        """A chunk that is the last one but for its text (``assembler._templated``): what ``payload`` would do with
        it, for the rules that read the text and the counters; the rest it answers as the last chunk did."""
        if self.errors:
            self.after_error += 1
            if self.after_error_first is None:
                self.after_error_first = index
                self.at[index] = offset
        self.last_plain_chunk = index
        p = Payload(index, offset, "chunk", None)
        state = self.stream_state
        if state is not StreamState.OPEN and state is not StreamState.USAGE:  # a chunk leaves those as they are
            stream = STREAM_TABLE[state].get(StreamEvent.CHUNK)
            if stream is None:
                self._violation(p, Violation(index, None, state.value, StreamEvent.CHUNK.value))
            else:
                self.stream_state = stream
        track = self.choices.get(0) or self._track(0)
        if track is None:
            return
        if track.state is not ChoiceState.OPEN:  # an open choice stays open on a delta, empty or not
            cevent = ChoiceEvent.DELTA if text else ChoiceEvent.EMPTY
            after = CHOICE_TABLE[track.state].get(cevent)
            if after is None:
                v = Violation(index, 0, track.state.value, cevent.value)
                self._violation(p, v)
                if track.state is ChoiceState.FINISHED and self.after_finish is None:
                    self.after_finish = v
            else:
                track.state = after
        track.deltas += 1  # a later delta: text of the right type (CHK-009/010 judged the first role), a role counted
        if self.template_role:
            track.roles += 1
        if text:
            if self.repeated is None:
                self._repeats(p.index, p.offset, track, text)
            if text.strip():
                track.answered = True
            self.output_chunks += 1
            if self.first_output is None:
                self.first_output = index
        elif self.empty_chunk is None and not self.template_role:  # (a role is something)
            self.empty_chunk = self.mark(p)

    def _annotation(self, p: Payload) -> None:
        if self.annotation is None:
            self.annotation = p
            self.mark(p)
        for c in p.value.get("choices") or []:
            if not isinstance(c, dict) or c.get("finish_reason") is None:
                continue
            reason, index = c["finish_reason"], c.get("index", 0)
            if isinstance(index, int) and (index in self.annotation_finishes or
                                           len(self.annotation_finishes) < MAX_TRACKED):
                mine = self.annotation_finishes.setdefault(index, [])
                if len(mine) < 2:
                    mine.append((self.mark(p), reason))
            if not (isinstance(reason, str) and reason in FINISH_REASONS):
                if self.annotation_bad is None:
                    self.annotation_bad = (self.mark(p), reason)
                if reason != "cancelled" and self.annotation_bad_but_cancelled is None:
                    self.annotation_bad_but_cancelled = (self.mark(p), reason)

    def _sequence(self, p: Payload) -> None:
        event = stream_event(p)
        nxt = STREAM_TABLE[self.stream_state].get(event)
        if nxt is None:
            v = Violation(p.index, None, self.stream_state.value, event.value)
            self._violation(p, v)
            if event is StreamEvent.FINISH and self.usage_before_finish is None:
                self.usage_before_finish = v
        else:
            self.stream_state = nxt

    def _violation(self, p: Payload, v: Violation) -> None:
        self.mark(p)

    def _track(self, index: int) -> ChoiceTrack | None:
        track = self.choices.get(index)
        if track is None and len(self.choices) < MAX_TRACKED:
            track = self.choices[index] = ChoiceTrack()
        return track

    def _chunk(self, p: Payload) -> None:
        value, event = p.value, p.index
        if self.first_chunk is None:
            self.first_chunk = p
        created = value.get("created")
        envelope = (list(value), value.get("id"), value.get("model"), value.get("object"), created, type(created))
        if envelope != self._envelope:
            self._envelope = envelope
            self._judge_envelope(p)
        choices = value.get("choices")
        if value.get("usage") is not None:
            self.usage_count += 1
            if self.usage_first is None:
                self.usage_first = p
                self.mark(p)
            self.usage_last = p
            self.mark(p)
            if choices and self.usage_with_choices is None:
                self.usage_with_choices = self.mark(p)
        elif choices == [] and self.empty_choices is None:
            self.empty_choices = self.mark(p)
        if not isinstance(choices, list):
            return
        output = False
        empty = bool(choices)
        for position, choice in enumerate(choices):
            if not isinstance(choice, dict):
                empty = False
                continue
            raw_delta = choice.get("delta")
            reason = choice.get("finish_reason")
            values = raw_delta.values() if isinstance(raw_delta, dict) else ()
            if reason is not None or any(v not in (None, "", [], {}) for v in values):
                empty = False
            self._choice(p, position, choice, raw_delta, reason)
            if isinstance(raw_delta, dict) and any(raw_delta.get(k) for k in OUTPUT_FIELDS):
                output = True
        if empty and self.empty_chunk is None:
            self.empty_chunk = self.mark(p)
        if output:
            self.output_chunks += 1
            if self.first_output is None:
                self.first_output = event

    def _judge_envelope(self, p: Payload) -> None:
        value, event = p.value, p.index
        if self.envelope_first is None:
            self.envelope_first = (self.mark(p), value.get("model"))
        if self.missing_keys is None:
            missing = [k for k in ("object", "created") if k not in value]
            if missing:
                self.missing_keys = (self.mark(p), missing)
        if self.bad_object is None and "object" in value and value["object"] != "chat.completion.chunk":
            self.bad_object = (self.mark(p), value["object"])
        if self.unknown_keys is None:
            unknown = sorted(set(value) - KNOWN_CHUNK_KEYS)
            if unknown:
                self.unknown_keys = (self.mark(p), unknown)
        for watch, key in ((self.ids, "id"), (self.models, "model")):
            before = (watch.bad, watch.changed)
            watch.see(event, value.get(key))
            if (watch.bad, watch.changed) != before:
                self.mark(p)
        if "created" in value:
            before_c = (self.created.stop, self.created.changed, self.created.jumped)
            self.created.see(event, value["created"])
            if (self.created.stop, self.created.changed, self.created.jumped) != before_c:
                self.mark(p)

    def _choice(self, p: Payload, position: int, choice: dict[str, Any], raw_delta: Any, reason: Any) -> None:
        event = p.index
        raw_index = choice.get("index")
        if self.bad_index is None:
            if not isinstance(raw_index, int) or isinstance(raw_index, bool):
                self.bad_index = (self.mark(p), raw_index)
            elif len(self.indices) < MAX_TRACKED:
                self.indices.add(raw_index)
        if "finish_reason" not in choice and self.no_finish_key is None:
            self.no_finish_key = (self.mark(p), choice)
        # the sequence table's choice index, as sequence.walk reads it
        seq_raw = choice.get("index", 0)
        track = self._track(seq_raw if isinstance(seq_raw, int) else position)
        cevent = choice_event(choice)
        if cevent is ChoiceEvent.FINISH_WITH_DELTA and self.finish_with_delta is None:
            carries = sorted(k for k, v in (raw_delta if isinstance(raw_delta, dict) else {}).items()
                             if v not in (None, "", []) and k != "role")
            self.finish_with_delta = (self.mark(p), carries)
        if track is not None:
            after = CHOICE_TABLE[track.state].get(cevent)
            if after is None:
                v = Violation(event, seq_raw if isinstance(seq_raw, int) else position, track.state.value,
                              cevent.value)
                self._violation(p, v)
                if track.state is ChoiceState.FINISHED and self.after_finish is None:
                    self.after_finish = v
            else:
                track.state = after
        if reason is not None:
            mine = self._track(choice.get("index", 0)) if isinstance(choice.get("index", 0), int) else None
            if mine is not None:
                mine.finish_count += 1
                if len(mine.finishes) < 2:
                    mine.finishes.append(self.mark(p))
            if not (isinstance(reason, str) and reason in FINISH_REASONS):
                if self.bad_finish is None:
                    self.bad_finish = (self.mark(p), reason)
                if reason != "cancelled" and self.bad_finish_but_cancelled is None:
                    self.bad_finish_but_cancelled = (self.mark(p), reason)
        if not isinstance(raw_delta, dict):
            if self.bad_delta is None:
                self.bad_delta = (self.mark(p), raw_delta)
            return
        # a delta: roles, text types, repetition, reasoning order, tool-call pieces (a non-integer choice index
        # counts as 0 here, as the delta walk read it)
        index = raw_index if raw_index is not None else 0
        index = index if isinstance(index, int) else 0
        dt = self._track(index)
        if dt is not None:
            self._delta(p, index, dt, raw_delta)

    def _delta(self, p: Payload, index: int, track: ChoiceTrack, delta: dict[str, Any]) -> None:
        is_first = track.deltas == 0
        track.deltas += 1
        role = delta.get("role")
        if "role" in delta and role is not None:
            track.roles += 1
            if self.role_problem is None and (role != "assistant" or track.roles > 1 or not is_first):
                self.role_problem = (self.mark(p), role, track.roles, index)
        elif is_first and self.no_role is None:
            self.no_role = (self.mark(p), delta)
        if self.bad_text is None:
            for key in TEXT_KEYS:
                v = delta.get(key)
                if v is not None and not isinstance(v, str):
                    self.bad_text = (self.mark(p), key, v)
                    break
        if self.late_reasoning is None and track.answered and any(
                isinstance(delta.get(k), str) and delta[k] for k in ("reasoning_content", "reasoning")):
            self.late_reasoning = self.mark(p)
        text = delta.get("content")
        if isinstance(text, str) and text:
            if self.repeated is None:
                self._repeats(p.index, p.offset, track, text)
            if text.strip():
                track.answered = True
        calls = delta.get("tool_calls")
        if calls is not None:
            self._calls(p, calls)

    def templated(self, chunks: list[tuple[int, int, int, str]]) -> None:
        """``event`` and ``repeat`` for each of these one-line message events that took the template path (index,
        offset, end, text: the commonest events of a stream, in a row). In the state most of a stream is in (open,
        choice 0 open, no [DONE], no error), which such a chunk leaves as it is, neither moves anything but the
        counters and the text: that is all this does, with the state in locals; in any other state it calls both."""
        n = 0
        for index, offset, end, text in chunks:
            if not self._quiet():
                self.event(index, offset, end, "message", 1)
                self.repeat(index, offset, text)
                n += 1
                continue
            break
        if n == len(chunks):
            return
        track = self.choices[0]
        outputs = 0
        first_output = self.first_output
        pieces = track.pieces
        answered = track.answered
        for index, offset, _, text in chunks[n:] if n else chunks:
            if text:
                if self.repeated is None:
                    before_len, last = track.text_len, track.last  # _repeats, inline: the same tests, the same piece
                    if (before_len >= 16 and len(text) >= before_len) or (len(last) >= 8 and len(text) > len(last)):
                        self._repeats(index, offset, track, text)
                    else:
                        pieces.append(text)
                        if len(pieces) >= HASH_AT:
                            _hash_pieces(track)
                        track.text_len = before_len + len(text)
                        track.last = text
                if not answered and text.strip():
                    answered = True
                outputs += 1
                if first_output is None:
                    first_output = index
            elif self.empty_chunk is None and not self.template_role:  # (a role is something)
                self.empty_chunk = self.mark(Payload(index, offset, "chunk", None))
        count = len(chunks) - n
        self.events += count
        index, offset, end, _ = chunks[-1]
        self.last_end, self.last_index, self.last_offset = end, index, offset
        self.last_plain_chunk = index
        track.deltas += count
        if self.template_role:
            track.roles += count
        track.answered = answered
        self.output_chunks += outputs
        self.first_output = first_output

    def _quiet(self) -> bool:
        """The state a chunk that took the template path leaves as it is but for the counters and the text."""
        track = self.choices.get(0)
        state = self.stream_state
        return self.done is None and not self.errors and self.first_end is not None and track is not None \
            and track.state is ChoiceState.OPEN and (state is StreamState.OPEN or state is StreamState.USAGE)

    def settled(self) -> tuple[Any, ...]:
        """Everything the watch keeps but the counters a copy of the last chunk moves (``repeats``): equal before and
        after a copy, every later copy leaves it equal too (the same input in the same state)."""
        return (_shape(self, _MOVED), tuple((i, _shape(t, _MOVED_TRACK)) for i, t in self.choices.items()))

    def repeats(self, count: int, index: int, offset: int, end: int, text: str) -> None:
        """``count`` more copies of the last chunk, settled (``settled`` unchanged by the last copy), the last of
        them event ``index``: what ``event`` and ``repeat`` would do with each, at once."""
        self.refused_repeats(count, index, offset, end)  # what any copy moves; then what a chunk's copy moves
        self.last_plain_chunk = index
        self.output_chunks += count
        track = self.choices[0]
        track.deltas += count
        if self.repeated is None:  # settled: no copy is a repeat (CHK-012), each adds its text
            if count > 1:
                _add_piece(track, text * (count - 1))
            _add_piece(track, text)

    def refused_repeats(self, count: int, index: int, offset: int, end: int) -> None:
        """``count`` more copies of the last payload, one JSON refuses, settled (``settled`` unchanged by the last
        copy), the last of them event ``index``: what ``event`` and ``payload`` would do with each, at once."""
        self.events += count
        self.last_end, self.last_index, self.last_offset = end, index, offset
        if self.done is not None:
            self.after_done += count
        if self.errors:
            self.after_error += count

    def _repeats(self, index: int, offset: int, track: ChoiceTrack, text: str) -> None:
        before_len, last = track.text_len, track.last
        if before_len >= 16 and len(text) >= before_len and _starts_with_text(text, track):
            self.repeated = (index, before_len)
            self.at[index] = offset
            return
        if len(last) >= 8 and len(text) > len(last) and text.startswith(last):
            self.repeated = (index, len(last))
            self.at[index] = offset
            return
        pieces = track.pieces  # _add_piece, inline: once per chunk
        pieces.append(text)
        if len(pieces) >= HASH_AT:
            _hash_pieces(track)
        track.text_len = before_len + len(text)
        track.last = text

    def _calls(self, p: Payload, calls: Any) -> None:
        if not isinstance(calls, list):
            if self.bad_calls is None:  # TOOL-001; the piece walk of TOOL-001/015/017 ends here, as the check's did
                self.bad_calls = (self.mark(p), calls)
            return
        for piece in calls:
            position = self.pieces
            self.pieces += 1
            if isinstance(piece, dict):
                function = piece.get("function")
                if isinstance(function, dict) and "arguments" in function and self.bad_arguments is None:
                    arguments = function["arguments"]
                    if arguments is not None and not isinstance(arguments, str):
                        self.bad_arguments = (self.mark(p), arguments)
                raw_index = piece.get("index", position)
                if isinstance(raw_index, int) and piece.get("id") is not None and raw_index not in self.call_ids \
                        and len(self.call_ids) < MAX_TRACKED:
                    self.call_ids[raw_index] = piece["id"]
            if self.bad_calls is not None:
                continue
            index = piece.get("index") if isinstance(piece, dict) else None
            if not isinstance(index, int) or isinstance(index, bool):
                if self.bad_piece is None:
                    self.bad_piece = (self.mark(p), piece)
                continue
            if index not in self.call_pieces and len(self.call_pieces) >= MAX_TRACKED:
                continue
            self.call_pieces[index] = self.call_pieces.get(index, 0) + 1
            ident, kind = piece.get("id"), piece.get("type")
            was_id, was_type = self.call_first.get(index, (None, None))
            changed = (ident is not None and was_id is not None and ident != was_id) or \
                (kind is not None and was_type is not None and kind != was_type)
            if changed and self.call_changed is None:
                self.call_changed = (self.mark(p), index, ident, kind, was_id, was_type)
            self.call_first[index] = (was_id if was_id is not None else ident,
                                      was_type if was_type is not None else kind)


HASH_AT = 512  # pieces of a choice's text kept as they came before they go into its digest


def _add_piece(track: ChoiceTrack, text: str) -> None:
    """A piece of a choice's text, for CHK-012's repeat check: kept (then hashed), counted, and remembered as the
    last one."""
    pieces = track.pieces
    pieces.append(text)
    if len(pieces) >= HASH_AT:
        _hash_pieces(track)
    track.text_len += len(text)
    track.last = text


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # (a lone surrogate from a \ud800 escape: one to one, no error)


def _hash_pieces(track: ChoiceTrack) -> None:
    """The pieces into the track's digest: CHK-012 keeps a digest of the text, not the text (the answer has it)."""
    if track.hashed is None:
        track.hashed = blake2b(digest_size=32)
    track.hashed.update(_encoded("".join(track.pieces)))
    track.pieces.clear()


def _starts_with_text(text: str, track: ChoiceTrack) -> bool:
    """Whether ``text`` starts with the choice's text so far (``len(text) >= track.text_len``). Past HASH_AT pieces
    the text is a digest: the start of ``text`` hashed the same way is compared with it (BLAKE2b, 256 bits: two texts
    alike by chance are out of reach); before, the pieces themselves."""
    if track.hashed is None:
        return text.startswith("".join(track.pieces))
    whole = track.hashed.copy()
    whole.update(_encoded("".join(track.pieces)))
    return blake2b(_encoded(text[:track.text_len]), digest_size=32).digest() == whole.digest()


_MOVED = frozenset({"events", "last_end", "last_index", "last_offset", "after_done", "after_error",
                    "last_plain_chunk", "output_chunks", "choices"})
_MOVED_TRACK = frozenset({"deltas", "hashed", "pieces", "text_len", "last"})


_NAMES: dict[tuple[type, frozenset[str]], tuple[str, ...]] = {}


def _shape(obj: Any, moved: frozenset[str] = frozenset()) -> tuple[Any, ...]:
    """The fields of a dataclass but ``moved``, each as a value that a later change cannot alter: a container by its
    length, a nested dataclass by its own fields."""
    key = (type(obj), moved)
    names = _NAMES.get(key)
    if names is None:
        names = _NAMES[key] = tuple(f.name for f in fields(obj) if f.name not in moved)
    out: list[Any] = []
    for name in names:
        value = getattr(obj, name)
        kind = type(value)
        if kind is list or kind is dict or kind is set:
            out.append(len(value))
        elif hasattr(kind, "__dataclass_fields__"):
            out.append(_shape(value))
        else:
            out.append(value)
    return tuple(out)
