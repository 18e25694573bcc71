"""ASGI entry point: the pages (Django, as under WSGI) and the interview's keystroke sockets, on one port.

``make up`` and docker-compose serve this with gunicorn's uvicorn worker.
One server for both keeps the sockets on the pages' origin: the session
cookie reaches them and no proxy has to route /ws/ elsewhere. Sockets are
authenticated by that session (AuthMiddlewareStack) after the Origin header
is checked against ALLOWED_HOSTS, so another site's page cannot open one
with the user's cookie. ``web.config.wsgi`` stays for a plain WSGI server
(pages only; the interviewer's view then falls back to polling).
"""

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.config.settings")

# Django first: the routes below import models.
django_application = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import OriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from web.interviews.routing import websocket_urlpatterns  # noqa: E402


class AllowedHostsOriginValidator(OriginValidator):
    """channels' validator of the same name, reading ALLOWED_HOSTS at each handshake rather than once at import.

    A socket whose Origin is not one of the site's hosts is refused before
    its cookie is read (a page elsewhere must not act with the user's session).
    """

    def __init__(self, application: Any) -> None:
        self.application = application

    @property
    def allowed_origins(self) -> list[str]:  # type: ignore[override]
        hosts = list(settings.ALLOWED_HOSTS)
        if settings.DEBUG and not hosts:
            hosts = ["localhost", "127.0.0.1", "[::1]"]  # Django's own default for DEBUG
        return hosts


application = ProtocolTypeRouter(
    {
        "http": django_application,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
