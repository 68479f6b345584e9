"""The client's Content-Encoding decoder: bounded output per read and in total, any chunking, gzip members."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest

from conformance.engine.client import INFLATE_PIECE, Decoder, _Abort

TEXT = b"".join(b'data: {"n": %d}\n\n' % i for i in range(20_000))


def decoded(decoder: Decoder, wire: bytes, step: int) -> list[bytes]:
    return [piece for at in range(0, len(wire), step) for piece in decoder.feed(wire[at:at + step])]


@pytest.mark.parametrize("step", [1, 7, 4096, 1 << 20])
def test_gzip_decodes_to_the_same_bytes_in_bounded_pieces(step: int) -> None:
    pieces = decoded(Decoder("gzip", 1 << 30), gzip.compress(TEXT), step)
    assert b"".join(pieces) == TEXT
    assert max(map(len, pieces)) <= INFLATE_PIECE


def test_stacked_encodings_are_undone_in_reverse_order() -> None:
    wire = zlib.compress(gzip.compress(TEXT))  # gzip first, then deflate: "Content-Encoding: gzip, deflate"
    pieces = decoded(Decoder("gzip, deflate", 1 << 30), wire, 1000)
    assert b"".join(pieces) == TEXT and max(map(len, pieces)) <= INFLATE_PIECE


def test_every_member_of_a_gzip_body_is_decoded() -> None:
    members = [TEXT[:1000], TEXT[1000:5000], TEXT[5000:]]
    wire = b"".join(gzip.compress(m) for m in members)
    assert b"".join(decoded(Decoder("gzip", 1 << 30), wire, 333)) == TEXT


def test_bytes_after_a_deflate_stream_are_not_body() -> None:
    assert b"".join(decoded(Decoder("deflate", 1 << 30), zlib.compress(b"abc") + b"junk", 2)) == b"abc"


def test_identity_and_unknown_encodings_pass_through_uncounted() -> None:
    assert b"".join(Decoder("identity", 10).feed(TEXT)) == TEXT
    unknown = Decoder("br", 10)
    assert unknown.unknown == ["br"] and b"".join(unknown.feed(b"raw")) == b"raw"


def test_the_cap_counts_every_member() -> None:
    wire = gzip.compress(b"x" * 600) * 2
    with pytest.raises(_Abort) as stop:
        decoded(Decoder("gzip", 1000), wire, 100)
    assert stop.value.reason == "decompression cap"


def test_a_bomb_inflates_a_piece_at_a_time() -> None:
    """256 MiB of zeros in about 256 KB: one read of the wire is inflated in pieces, never whole, and the cap (here
    64 MiB) ends it; the memory used is a few pieces' and copies of the read's input (zlib hands back what it has not
    read yet), never the read's output."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    wire = b"".join(deflate.compress(bytes(1 << 20)) for _ in range(256)) + deflate.flush()
    decoder = Decoder("gzip", 64 << 20)
    tracemalloc.start()
    produced = 0
    with pytest.raises(_Abort) as stop:
        for piece in decoder.feed(wire):  # the whole bomb as one read
            assert len(piece) <= INFLATE_PIECE
            produced += len(piece)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert stop.value.reason == "decompression cap" and produced == 64 << 20
    assert peak < 4 * INFLATE_PIECE + 3 * len(wire) < 2 << 20, peak  # the whole output was 64 MiB at once


def test_a_corrupt_body_is_a_decode_error() -> None:
    with pytest.raises(_Abort) as stop:
        decoded(Decoder("gzip", 1 << 20), b"\x1f\x8b\x08\x00garbage" * 10, 5)
    assert stop.value.reason == "decode error"
