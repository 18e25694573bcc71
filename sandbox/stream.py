"""The runner's stdout as it arrives: a capped buffer, read frame by frame as it grows.

Place in the flow: a backend's pump thread (``process.pump_fd`` for a host
process, the demultiplexer of ``docker.py`` for a container) feeds each
chunk it reads to :meth:`StreamBuffer.add`; the sandbox (``session.py``)
waits on it for the ``ready`` frame before sending the job and for the
``done`` frame after. The bytes themselves go back to the grader untouched,
which decodes them (``sandbox/runner/wire.py``): here only the frames'
headers are read, to know when to stop waiting.

A frame is a 4-byte big-endian header length, a JSON header, then
``blob_len`` bytes of blob if the header says so. Each byte is parsed once:
a cursor remembers where the next frame starts, so a run of many small
frames costs time in proportion to its length.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class StreamBuffer:
    """A capped buffer of the runner's stream that readers can wait on for frames.

    The pump calls :meth:`add` and, at the end, :meth:`close`. Past ``cap``
    bytes it keeps nothing more and calls ``on_overflow`` (which kills the
    sandbox). After the run, :attr:`buffer` holds the stream as received.
    """

    def __init__(self, cap: int, on_overflow: Callable[[], None] | None = None) -> None:
        self.buffer = bytearray()
        self.cap = cap
        self.overflow = False
        self.eof = threading.Event()
        self._changed = threading.Condition()
        self._on_overflow = on_overflow
        # The parse: where the next frame starts (it may lie past the end of
        # the buffer while a blob is still arriving), the first frame's header
        # (None if it was not a JSON object), and the first header of each type.
        self._next_frame = 0
        self._frames = 0
        self._first: dict[str, Any] | None = None
        self._first_of_type: dict[str, dict[str, Any]] = {}
        # Where each ``ready`` and ``done`` frame ends: a sandbox that runs a
        # series of jobs (session.py) cuts the stream into one piece per job there.
        self._ends: dict[str, list[int]] = {"ready": [], "done": []}
        self._unreadable = False  # a header that is not JSON: nothing after it can be framed
        # Every frame whose header was read: (header or None, where its blob starts, where it ends).
        # A watcher of the run (``frames_after``) gets each one once its blob has arrived too.
        self._spans: list[tuple[dict[str, Any] | None, int, int]] = []

    def add(self, chunk: bytes) -> bool:
        """Append a chunk; False once over the cap (the caller stops reading)."""
        with self._changed:
            room = self.cap - len(self.buffer)
            self.buffer += chunk[: max(room, 0)]
            if len(chunk) > room:
                self.overflow = True
            self._parse()
            self._changed.notify_all()
        if self.overflow and self._on_overflow:
            self._on_overflow()
        return not self.overflow

    def close(self) -> None:
        with self._changed:
            self.eof.set()
            self._changed.notify_all()

    def _parse(self) -> None:
        """Read the headers of the frames completed since the last call; the caller holds the lock."""
        data = self.buffer
        at = self._next_frame
        while not self._unreadable and len(data) - at >= 4:
            size = int.from_bytes(data[at : at + 4], "big")
            if len(data) - at < 4 + size:
                break
            try:
                parsed = json.loads(bytes(data[at + 4 : at + 4 + size]))
            except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
                self._unreadable = True
                parsed = None
            header = parsed if isinstance(parsed, dict) else None
            if self._frames == 0:
                self._first = header
            self._frames += 1
            if header is not None and isinstance(header.get("type"), str):
                self._first_of_type.setdefault(header["type"], header)
            blob = header.get("blob_len", 0) if header is not None else 0
            blob_at = at + 4 + size
            at = blob_at + (blob if isinstance(blob, int) and blob > 0 else 0)
            self._spans.append((header, blob_at, at))
            if header is not None and header.get("type") in self._ends:
                self._ends[header["type"]].append(at)
        self._next_frame = at

    def _wait(self, found: Callable[[], T | None], timeout: float) -> T | None:
        """``found()`` once it is not None; None at EOF or when ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                value = found()
                if value is not None:
                    return value
                if self.eof.is_set():
                    return None
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._changed.wait(remaining)

    def wait_for_first_frame(self, timeout: float) -> dict[str, Any] | None:
        """The first frame's header once it is complete, or None (not a JSON object, EOF or timeout)."""
        # The first frame decides, whatever it is: a boxed value tells "came, unreadable" from "not yet".
        boxed = self._wait(lambda: (self._first,) if self._frames else None, timeout)
        return boxed[0] if boxed is not None else None

    def wait_for_frame(self, kind: str, timeout: float) -> dict[str, Any] | None:
        """The header of the first frame of type ``kind``, or None at EOF or timeout."""
        return self._wait(lambda: self._first_of_type.get(kind), timeout)

    def wait_for_done(self, timeout: float, count: int = 1) -> bool:
        """Whether the ``count``-th ``done`` frame arrived (True) before EOF or ``timeout`` (False).

        The runner's last word on a job: once it is here the job's result is
        complete, and the sandbox can be torn down (or given its next job in a
        series) without waiting for its processes to exit.
        """
        return self._wait(lambda: True if len(self._ends["done"]) >= count else None, timeout) is not None

    def frame_count(self) -> int:
        """How many frames have been read whole (header and blob) so far."""
        with self._changed:
            return self._complete()

    def _complete(self) -> int:
        """The number of leading frames whose blob has arrived; the caller holds the lock."""
        count = len(self._spans)
        while count and self._spans[count - 1][2] > len(self.buffer):
            count -= 1
        return count

    def frames_after(self, seen: int, timeout: float) -> list[tuple[dict[str, Any] | None, bytes | None]]:
        """The whole frames past the first ``seen``, as (header, blob), waiting up to ``timeout`` for one; [] at EOF or timeout.

        For a watcher of the run (``session.py``'s ``on_frame``): each frame
        once, in order, as soon as its last byte is here. A header that is
        not a JSON object comes as None (nothing after it can be framed).
        """
        found = self._wait(lambda: True if self._complete() > seen else None, timeout)
        if found is None:
            return []
        with self._changed:
            spans = self._spans[seen : self._complete()]
            return [(header, bytes(self.buffer[start:end]) if end > start else None) for header, start, end in spans]

    def end_of(self, kind: str, count: int = 1) -> int | None:
        """Where the ``count``-th frame of type ``kind`` (``ready`` or ``done``) ends in :attr:`buffer`; None before it came."""
        with self._changed:
            ends = self._ends.get(kind, [])
            return ends[count - 1] if len(ends) >= count else None
