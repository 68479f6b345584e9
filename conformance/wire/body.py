"""Response bodies too long to hold in memory: kept in a file as they arrive, read back in slices.

A live body is held in memory up to ``HOLD_BYTES``; past that, what has come so far and everything after it go to a
spool file (``Spool``), and the exchange's body is a ``SpooledBody``: its length, its first bytes, and the file. The
judge reads it in slices (``slices``), the wire log copies the file, and the few readers that need the whole body
(a JSON answer) read it whole, within the byte cap. So a run's memory does not grow with the length of the bodies
it records: a 64 MiB stream costs the judge its state, not 64 MiB.

Spool files live in one temporary folder per process, named by a counter (never by anything a server sent), and
are removed when the process ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, overload

HOLD_BYTES = 2 * 1024 * 1024  # a body up to this is held as bytes; a longer one is spooled to disk
SLICE = 64 * 1024
HEAD = 64 * 1024  # the first bytes of a spooled body, kept in memory (format detection, excerpts, short reads)


class SpooledBody:
    """A body in a file: what ``bytes`` offers that the suite reads (length, slices, a head), without holding it."""

    __slots__ = ("path", "size", "head", "masked", "__weakref__")

    def __init__(self, path: Path, size: int | None = None) -> None:
        self.path = path
        self.masked: tuple[str, ...] = ()  # the secret forms its file has been masked for (Scrubber.data)
        self.size = path.stat().st_size if size is None else size
        with path.open("rb") as f:
            self.head = f.read(HEAD)

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __repr__(self) -> str:
        return f"SpooledBody({self.size} bytes)"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpooledBody):
            return self.path == other.path or (self.size == other.size and self.tobytes() == other.tobytes())
        if isinstance(other, (bytes, bytearray)):
            return self.size == len(other) and self.tobytes() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.path, self.size))

    @overload
    def __getitem__(self, key: int) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> bytes: ...

    def __getitem__(self, key: int | slice) -> int | bytes:
        if isinstance(key, int):
            index = key + self.size if key < 0 else key
            if not 0 <= index < self.size:
                raise IndexError("body index out of range")
            return self.read(index, 1)[0]
        start, stop, step = key.indices(self.size)
        if step != 1:
            return self.tobytes()[key]
        if stop <= start:
            return b""
        if stop <= len(self.head):
            return self.head[start:stop]
        return self.read(start, stop - start)

    def read(self, offset: int, length: int) -> bytes:
        with self.path.open("rb") as f:
            f.seek(offset)
            return f.read(length)

    def slices(self, size: int = SLICE) -> Iterator[bytes]:
        """The body in order, ``size`` bytes at a time (an empty body: one empty slice)."""
        with self.path.open("rb") as f:
            while piece := f.read(size):
                yield piece

    def isspace(self) -> bool:
        return self.size > 0 and all(piece.isspace() for piece in self.slices())

    def tobytes(self) -> bytes:
        """The whole body in memory: only for the readers that need it whole (a JSON document), within the cap."""
        return self.path.read_bytes()

    def copy_to(self, target: Path) -> None:
        """The body written to ``target``: a hard link to the spool file where both lie on one file system (a flood's
        gigabytes are not written twice; the link outlives the spool's removal), with the mode a new file gets there;
        else a copy."""
        target.touch()
        mode = target.stat().st_mode & 0o777  # what the umask gives a file created here
        target.unlink()
        try:
            os.link(self.path, target)
        except OSError:  # another file system, or links refused: copied
            shutil.copyfile(self.path, target)
        else:
            os.chmod(target, mode)


Body = bytes | SpooledBody


def whole(body: Body) -> bytes:
    """A body's bytes, whole (read from its file when it is spooled)."""
    return body.tobytes() if isinstance(body, SpooledBody) else body


def held(body: Body) -> bytes:
    """A body as the readers of short documents (an error envelope, a health answer) read it: whole when it is held,
    only its first ``HEAD`` bytes when it was long enough to be spooled (no such document is megabytes long)."""
    return body.head if isinstance(body, SpooledBody) else body


def slices(body: Body, size: int = SLICE) -> Iterator[bytes]:
    """A body in order, ``size`` bytes at a time, wherever it is kept (an empty body: one empty slice)."""
    if isinstance(body, SpooledBody):
        if not body.size:
            yield b""
        yield from body.slices(size)
        return
    for at in range(0, len(body), size):
        yield body[at:at + size]
    if not body:
        yield b""


_FOLDER: tempfile.TemporaryDirectory[str] | None = None
_LOCK = threading.Lock()
_COUNT = 0


def spool_folder() -> Path:
    """This process's spool folder (made on first use, removed at exit), or CONFORMANCE_SPOOL_DIR's."""
    global _FOLDER
    with _LOCK:
        if _FOLDER is None:
            _FOLDER = tempfile.TemporaryDirectory(prefix="conformance-spool-",
                                                  dir=os.environ.get("CONFORMANCE_SPOOL_DIR") or None)
        return Path(_FOLDER.name)


def _new_path() -> Path:
    global _COUNT
    folder = spool_folder()
    with _LOCK:
        _COUNT += 1
        return folder / f"{_COUNT:06d}.body"


class Spool:
    """A body as it arrives: bytes in memory up to ``hold``, then the file (what came so far and all after it)."""

    def __init__(self, hold: int = HOLD_BYTES) -> None:
        self.hold = hold
        self.memory = bytearray()
        self.file: Path | None = None
        self._out: Any = None
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def write(self, data: bytes) -> None:
        if not data:
            return
        self.size += len(data)
        if self._out is None and len(self.memory) + len(data) <= self.hold:
            self.memory += data
            return
        if self._out is None:
            self.file = _new_path()
            self._out = self.file.open("wb")
            self._out.write(self.memory)
            self.memory = bytearray()
        self._out.write(data)

    def close(self) -> Body:
        """The body: bytes when it was held, a ``SpooledBody`` when it went to disk. Its file is removed with the
        last reference to it (or at exit)."""
        if self._out is None:
            return bytes(self.memory)
        self._out.close()
        self._out = None
        assert self.file is not None
        spooled = SpooledBody(self.file, self.size)
        weakref.finalize(spooled, _unlink, self.file)
        return spooled


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
