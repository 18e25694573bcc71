"""sandbox.stream: the runner's frames read as they arrive, each byte parsed once, capped."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from sandbox import stream as stream_module
from sandbox.runner.wire import write_frame
from sandbox.stream import StreamBuffer

T = TypeVar("T")
AN_HOUR = 3600.0


def promptly(call: Callable[[], T]) -> T:
    """``call()``, which must return without waiting out its (hour-long) timeout."""
    result: list[T] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(60)
    assert result, "it waited for its timeout instead of returning"
    return result[0]


def encoded(*frames: tuple[dict[str, Any], bytes | None]) -> bytes:
    out = io.BytesIO()
    for header, blob in frames:
        write_frame(out, header, blob)
    return out.getvalue()


def feed(buffer: StreamBuffer, data: bytes, chunk: int) -> None:
    for at in range(0, len(data), chunk):
        buffer.add(data[at : at + chunk])


@pytest.mark.parametrize("chunk", [1 << 16, 4093, 7])
def test_many_small_frames_in_chunks_are_each_parsed_once(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Probes that print little and return small results: thousands of tiny frames
    # arriving in pipe-sized chunks (and in chunks that split every frame).
    count = 20_000 if chunk > 7 else 2_000
    frames: list[tuple[dict[str, Any], bytes | None]] = [({"type": "ready", "profile": "python"}, None)]
    frames += [({"type": "probe", "name": f"p{i}"}, b"x" * (i % 5) if i % 2 else None) for i in range(count)]
    frames.append(({"type": "done"}, None))
    data = encoded(*frames)
    decoded: list[bytes] = []
    real_loads = json.loads

    def counting_loads(raw: bytes, **kwargs: Any) -> Any:
        decoded.append(raw)
        return real_loads(raw, **kwargs)

    monkeypatch.setattr(stream_module.json, "loads", counting_loads)
    buffer = StreamBuffer(cap=len(data))
    # As in a run: the sandbox waits for "done" while the pump adds chunk after chunk, waking it each time.
    waiter = threading.Thread(target=lambda: buffer.wait_for_done(AN_HOUR), daemon=True)
    waiter.start()
    feed(buffer, data, chunk)
    waiter.join(60)
    assert not waiter.is_alive(), "the waiter missed the done frame"

    assert len(decoded) == len(frames)  # linear: no header is read twice, whatever the chunks and the wake-ups
    assert buffer.wait_for_first_frame(0) == {"type": "ready", "profile": "python"}
    assert buffer.wait_for_frame("probe", 0) == {"type": "probe", "name": "p0"}
    assert buffer.wait_for_done(0)
    assert bytes(buffer.buffer) == data and not buffer.overflow


def test_done_is_seen_only_once_its_frame_is_complete() -> None:
    data = encoded(({"type": "ready"}, None), ({"type": "done"}, None))
    buffer = StreamBuffer(cap=1 << 20)
    buffer.add(data[:-1])
    assert not buffer.wait_for_done(0)
    buffer.add(data[-1:])
    assert buffer.wait_for_done(0)


def test_a_blob_that_holds_frame_bytes_is_not_read_as_frames() -> None:
    # An observation's bytes are the candidate's: a "done" frame inside one must not end the run.
    forged = encoded(({"type": "done"}, None))
    data = encoded(({"type": "ready"}, None), ({"type": "array", "probe": "p"}, forged))
    buffer = StreamBuffer(cap=1 << 20)
    feed(buffer, data, 3)
    assert not buffer.wait_for_done(0)
    buffer.add(encoded(({"type": "done"}, None)))
    assert buffer.wait_for_done(0)


def test_a_first_frame_that_is_not_a_json_object_is_not_ready() -> None:
    buffer = StreamBuffer(cap=1 << 20)
    buffer.add(len(b"[1]").to_bytes(4, "big") + b"[1]")
    assert promptly(lambda: buffer.wait_for_first_frame(AN_HOUR)) is None  # the first frame came, and it is no header

    garbled = StreamBuffer(cap=1 << 20)
    garbled.add(len(b"{not json").to_bytes(4, "big") + b"{not json" + encoded(({"type": "done"}, None)))
    assert promptly(lambda: garbled.wait_for_first_frame(AN_HOUR)) is None
    assert not garbled.wait_for_done(0)  # nothing after an unreadable header can be framed


def test_a_waiter_wakes_when_the_frame_arrives() -> None:
    buffer = StreamBuffer(cap=1 << 20)
    started = threading.Event()

    def wait() -> bool:
        started.set()
        return buffer.wait_for_done(AN_HOUR)

    def arrive() -> None:
        assert started.wait(60)
        buffer.add(encoded(({"type": "ready"}, None), ({"type": "done"}, None)))

    threading.Thread(target=arrive, daemon=True).start()
    assert promptly(wait) is True


def test_the_end_of_the_stream_ends_every_wait() -> None:
    buffer = StreamBuffer(cap=1 << 20)
    buffer.add(encoded(({"type": "ready"}, None)))
    buffer.close()
    assert promptly(lambda: buffer.wait_for_done(AN_HOUR)) is False  # nothing more can come
    assert promptly(lambda: buffer.wait_for_frame("probe", AN_HOUR)) is None
    assert buffer.wait_for_frame("ready", 0) == {"type": "ready"}


def test_past_the_cap_nothing_more_is_kept_and_the_sandbox_is_killed() -> None:
    kills: list[bool] = []
    buffer = StreamBuffer(cap=10, on_overflow=lambda: kills.append(True))
    assert buffer.add(b"12345")
    assert not buffer.add(b"6789012")
    assert bytes(buffer.buffer) == b"1234567890"
    assert buffer.overflow and kills == [True]


def test_a_watcher_gets_each_frame_once_and_only_when_its_blob_is_whole() -> None:
    data = encoded(({"type": "ready"}, None), ({"type": "probe", "name": "p", "arrays": 1}, None), ({"type": "array", "probe": "p"}, b"0123456789"))
    buffer = StreamBuffer(cap=1 << 20)
    buffer.add(data[:-4])  # the array's header is here, the end of its blob is not
    assert [h["type"] for h, _ in buffer.frames_after(0, 0)] == ["ready", "probe"]
    assert buffer.frames_after(2, 0) == []
    buffer.add(data[-4:])
    assert buffer.frames_after(2, 0) == [({"type": "array", "probe": "p", "blob_len": 10}, b"0123456789")]
    assert buffer.frame_count() == 3


def test_a_watcher_wakes_when_a_frame_arrives() -> None:
    buffer = StreamBuffer(cap=1 << 20)
    buffer.add(encoded(({"type": "ready"}, None)))
    threading.Timer(0.05, lambda: buffer.add(encoded(({"type": "probe", "name": "p"}, None)))).start()
    assert promptly(lambda: buffer.frames_after(1, AN_HOUR)) == [({"type": "probe", "name": "p"}, None)]
    buffer.close()
    assert promptly(lambda: buffer.frames_after(2, AN_HOUR)) == []
