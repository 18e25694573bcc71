"""Gunicorn's worker for web.config.asgi: ``gunicorn -k web.config.asgi_worker.Worker web.config.asgi:application``.

Gunicorn keeps doing what it did for the WSGI app (a fixed number of worker
processes, restarts, graceful reloads); each worker runs uvicorn's event
loop, which serves the sync page views in Django's thread and the
interview's websockets beside them. Three choices differ from the
defaults: websockets through the library's sans-I/O implementation (the
default "auto" picks its deprecated legacy API); no lifespan protocol
(Django has no startup or shutdown hooks to run); and idle keep-alive
connections kept 65 s, not gunicorn's 2 s: a client that sends its next
request on a kept connection just as the server drops it gets a reset
(a page read 2-6 s after the last one did, under `make loadtest`), and an
idle connection costs an event loop almost nothing.
"""

from typing import Any

from uvicorn_worker import UvicornWorker


class Worker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {"loop": "auto", "http": "auto", "ws": "websockets-sansio", "lifespan": "off", "timeout_keep_alive": 65}
