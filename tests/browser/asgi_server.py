"""The browser tests' server: the production ASGI application (pages and sockets) under uvicorn, in a thread.

It replaces pytest-django's WSGI live server for tests/browser (conftest.py
names it ``live_server``, with the same ``url``), so the pages are served the
way ``make up`` serves them and the interview's keystroke sockets work.
Static files come from the app folders (Django's ASGIStaticFilesHandler),
as the WSGI live server did. It shares the test database as the WSGI server
did: a file, so tests needing the server's writes use transactional_db.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from django.test.utils import modify_settings

HOST = "127.0.0.1"


class AsgiLiveServer:
    def __init__(self) -> None:
        import uvicorn
        from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

        from web.config.asgi import application

        with socket.socket() as s:
            s.bind((HOST, 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://{HOST}:{self.port}"
        # pytest-django's _live_server_helper enables this around each test that uses the server.
        self._live_server_modified_settings = modify_settings(ALLOWED_HOSTS={"append": HOST})
        config = uvicorn.Config(
            ASGIStaticFilesHandler(application), host=HOST, port=self.port, lifespan="off", ws="websockets-sansio", log_level="warning",
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
