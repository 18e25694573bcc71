"""The runner's frames: how a sandbox's stream to the trusted worker is cut up.

The stream is a sequence of frames: a 4-byte big-endian length, that many
bytes of a JSON object (the header), then, if the header names a
``blob_len``, that many raw bytes. The reader enforces a byte budget so a
sandbox cannot make the worker buffer without bound, and tells a stream that
ended cleanly from one cut inside a frame.

What a probe observed travels in these frames as the observation codec's
tree and blobs (``codec.py``). This module depends on the standard library
only, because it is imported inside the sandbox before any candidate code
runs.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from typing import Any, BinaryIO

MAX_HEADER_BYTES = 4 * 1024 * 1024
# The runner's exit status when its stdin ends where a job was due: the trusted side went away (a launcher or
# engine restart cut the attach), so the job never arrived. Candidate code runs only in the runner's children and
# cannot make the runner itself exit with it (the runner is undumpable: no child can ptrace it).
EXIT_NO_JOB = 75  # EX_TEMPFAIL


class WireError(ValueError):
    """The stream does not follow the frame format, or is over its budget."""


def write_frame(out: BinaryIO, header: dict[str, Any], blob: bytes | None = None) -> None:
    """Write one frame and flush it; a blob's length goes into the header as ``blob_len``."""
    if blob is not None:
        header = {**header, "blob_len": len(blob)}
    raw = json.dumps(header, allow_nan=False, separators=(",", ":")).encode()
    out.write(struct.pack(">I", len(raw)))
    out.write(raw)
    if blob is not None:
        out.write(blob)
    out.flush()


def _read_exact(src: BinaryIO, n: int) -> bytes:
    chunks = []
    remaining = n
    while remaining:
        chunk = src.read(remaining)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frames(src: BinaryIO, budget: int) -> Iterator[tuple[dict[str, Any], bytes | None]]:
    """Yield (header, blob) frames until EOF; raise WireError past ``budget`` bytes.

    A stream cut in the middle of a frame ends iteration with WireError, so a
    caller can tell "the runner stopped cleanly" from "it died mid-write".
    """
    used = 0
    while True:
        prefix = src.read(4)
        if not prefix:
            return
        if len(prefix) < 4:
            raise WireError("stream ended inside a frame length")
        (size,) = struct.unpack(">I", prefix)
        if size > MAX_HEADER_BYTES:
            raise WireError(f"frame header of {size} bytes is over the {MAX_HEADER_BYTES}-byte limit")
        used += 4 + size
        if used > budget:
            raise WireError(f"output is over the {budget}-byte limit")
        try:
            header = json.loads(_read_exact(src, size))
        except EOFError:
            raise WireError("stream ended inside a frame header") from None
        except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[..." nested past the interpreter's limit
            raise WireError(f"frame header is not JSON: {exc}") from None
        if not isinstance(header, dict):
            raise WireError("frame header is not a JSON object")
        blob = None
        blob_len = header.get("blob_len")
        if blob_len is not None:
            if not isinstance(blob_len, int) or blob_len < 0:
                raise WireError("frame has an invalid blob_len")
            used += blob_len
            if used > budget:
                raise WireError(f"output is over the {budget}-byte limit")
            try:
                blob = _read_exact(src, blob_len)
            except EOFError:
                raise WireError("stream ended inside a frame body") from None
        yield header, blob
