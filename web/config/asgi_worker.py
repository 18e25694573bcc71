"""Gunicorn's worker for web.config.asgi: ``gunicorn -k web.config.asgi_worker.Worker web.config.asgi:application``.

Gunicorn keeps doing what it did for the WSGI app (a fixed number of worker
processes, restarts, graceful reloads); each worker runs uvicorn's event
loop, which serves the sync page views in Django's thread and the
interview's websockets beside them. Two choices differ from uvicorn's
defaults: websockets through the library's sans-I/O implementation (the
default "auto" picks its deprecated legacy API), and no lifespan protocol
(Django has no startup or shutdown hooks to run).
"""

from typing import Any

from uvicorn_worker import UvicornWorker


class Worker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {"loop": "auto", "http": "auto", "ws": "websockets-sansio", "lifespan": "off"}
