"""The browser tests' server answers static files without ever handing an open file out of the thread that read it.

A page left mid-file cancels the request's task; a FileResponse in flight
at that moment was closed only by the garbage collector, and the
ResourceWarning failed whichever test ran then (CI of 8c4a8ea, on
chartjs-chart-matrix.min.js). These tests pin the two ways out.
"""

import asyncio
import gc
import os
import threading
import warnings
from pathlib import Path

from django.test import RequestFactory

from tests.browser.asgi_server import _static_files_in_memory

STATIC_FILE = "vendor/chartjs/chartjs-chart-matrix.min.js"
ON_DISK = Path(__file__).resolve().parents[2] / "web" / "static" / STATIC_FILE


def _open_paths() -> set[str]:
    fds = Path("/proc/self/fd")
    paths = set()
    for fd in os.listdir(fds):
        try:
            paths.add(os.readlink(fds / fd))
        except OSError:
            continue
    return paths


def _handler() -> object:
    async def app(scope: object, receive: object, send: object) -> None:  # the pages; never reached for /static/
        raise AssertionError("a static path reached the application")

    return _static_files_in_memory(app)


def test_a_static_file_comes_back_as_its_bytes_with_the_file_already_closed() -> None:
    response = _handler().serve(RequestFactory().get(f"/static/{STATIC_FILE}"))  # type: ignore[attr-defined]
    assert not response.streaming
    assert response.content == ON_DISK.read_bytes()
    assert response["Content-Type"] == "text/javascript"
    assert str(ON_DISK) not in _open_paths()


def test_a_request_cancelled_while_its_file_is_read_leaves_no_file_for_the_garbage_collector() -> None:
    handler = _handler()
    reading = threading.Event()
    release = threading.Event()
    serve = type(handler).serve

    def slow_serve(self: object, request: object) -> object:
        reading.set()
        release.wait(10)  # the awaiting task is cancelled meanwhile, as when the page is left
        return serve(self, request)

    type(handler).serve = slow_serve  # type: ignore[method-assign]

    async def cancel_mid_read() -> None:
        task = asyncio.ensure_future(handler.get_response_async(RequestFactory().get(f"/static/{STATIC_FILE}")))  # type: ignore[attr-defined]
        while not reading.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        release.set()
        try:
            await task
        except asyncio.CancelledError:
            pass
        await asyncio.sleep(0.2)  # the worker thread finishes its serve and its result is dropped

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            asyncio.run(cancel_mid_read())
            gc.collect()
    finally:
        type(handler).serve = serve  # type: ignore[method-assign]
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert str(ON_DISK) not in _open_paths()
