"""Real services for these tests (see tests/services.py), and the server they drive: the ASGI application.

``live_server`` is pytest-django's fixture name with our server behind it
(tests/browser/asgi_server.py): uvicorn serving web.config.asgi, pages and
websockets, as ``make up`` does. Tests use it exactly as before.
"""

from collections.abc import Iterator

import pytest

from tests.browser.asgi_server import AsgiLiveServer
from tests.services import celery_worker, redis_url, worker_extra_env  # noqa: F401 - pytest fixtures


@pytest.fixture(scope="session")
def live_server(django_db_setup: None) -> Iterator[AsgiLiveServer]:
    server = AsgiLiveServer()
    yield server
    server.stop()
