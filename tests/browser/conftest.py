"""Real services for these tests (see tests/services.py), and the server they drive: the ASGI application.

``live_server`` is pytest-django's fixture name with our server behind it
(tests/browser/asgi_server.py): uvicorn serving web.config.asgi, pages and
websockets, as ``make up`` does. Tests use it exactly as before.
"""

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.browser.asgi_server import AsgiLiveServer
from tests.browser.test_submit_in_browser import CHROMIUM, CHROMIUM_ARGS
from tests.services import celery_worker, redis_url, worker_extra_env  # noqa: F401 - pytest fixtures


@pytest.fixture(scope="session")
def live_server(django_db_setup: None) -> Iterator[AsgiLiveServer]:
    server = AsgiLiveServer()
    yield server
    server.stop()


@pytest.fixture
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, through Playwright; each test's contexts start from fresh, empty profiles."""
    # Playwright's sync API runs an event loop in this thread; Django refuses sync DB calls in one unless allowed.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
