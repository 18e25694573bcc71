"""The browser tests' server: the production ASGI application (pages and sockets) under uvicorn, in a thread.

It replaces pytest-django's WSGI live server for tests/browser (conftest.py
names it ``live_server``, with the same ``url``), so the pages are served the
way ``make up`` serves them and the interview's keystroke sockets work.
Static files come from the app folders (Django's ASGIStaticFilesHandler,
each read whole and closed in its worker thread: see
``_static_files_in_memory``), as the WSGI live server
did. It shares the test database as the WSGI server did: a file, so tests
needing the server's writes use transactional_db.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from django.test.utils import modify_settings

HOST = "127.0.0.1"


def _static_files_in_memory(application: Any) -> Any:
    """Django's ASGIStaticFilesHandler, answering with the file's bytes, read and closed in the thread that opened it.

    A page left while one of its static files is on its way makes Django's
    ASGI handler cancel the request's task. Where the file was still open at
    that moment (being sent, or in a FileResponse that ``serve`` had just
    returned from its worker thread to an awaiter that was cancelled
    meanwhile) nothing closes it but the garbage collector, and pytest fails
    whichever test is running then on the ResourceWarning. So ``serve``,
    which runs in the worker thread, reads the file whole and closes it
    before it returns: no open file ever leaves that function. Static files
    here are small.
    """
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from django.http import HttpResponse

    class InMemory(ASGIStaticFilesHandler):  # type: ignore[misc]
        def serve(self, request: Any) -> Any:
            response = super().serve(request)
            if not response.streaming:
                return response
            try:
                body = b"".join(response.streaming_content)
            finally:
                response.close()
            whole = HttpResponse(body, status=response.status_code)
            for header, value in response.items():
                if header.lower() != "content-length":
                    whole[header] = value
            return whole

    return InMemory(application)


class AsgiLiveServer:
    def __init__(self) -> None:
        import uvicorn

        from web.config.asgi import application

        with socket.socket() as s:
            s.bind((HOST, 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://{HOST}:{self.port}"
        # pytest-django's _live_server_helper enables this around each test that uses the server.
        self._live_server_modified_settings = modify_settings(ALLOWED_HOSTS={"append": HOST})
        config = uvicorn.Config(
            _static_files_in_memory(application), host=HOST, port=self.port, lifespan="off", ws="websockets-sansio", log_level="warning",
        )  # fmt: skip
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="asgi-live-server", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the ASGI live server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    def __str__(self) -> str:
        return self.url

    def __add__(self, other: Any) -> str:
        return f"{self}{other}"
