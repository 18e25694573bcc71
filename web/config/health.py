"""Health of the service: database, broker and grading workers, for probes and operators.

Place in the flow: ``GET /healthz`` (load balancers, docker-compose) answers
with the database and the broker; ``GET /healthz?workers=1`` and
``manage.py health`` also ask every Celery worker, through the broker's
control channel, for its sandbox backend readiness and pool sizes (the
``sandbox_health`` control command in web/config/celery.py). A failing check
names what failed (details for staff only: errors, worker hosts, counts);
the HTTP status is 503 when anything is unhealthy.

Asking the workers broadcasts to all of them and holds a web worker for up
to 3 s, so ``?workers=1`` is for staff and for a monitor that sends
``Authorization: Bearer <HEALTHZ_TOKEN>``; anyone else gets 403 saying so.
"""

from __future__ import annotations

import hmac
import time
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from web.submissions.models import Status, Submission


def _timed(check: Any) -> dict[str, Any]:
    t0 = time.monotonic()
    result: dict[str, Any] = check()
    result["ms"] = int((time.monotonic() - t0) * 1000)
    return result


def database_health() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        backlog = {s: Submission.objects.filter(status=s).count() for s in (Status.QUEUED, Status.RUNNING)}
    except DatabaseError as exc:
        return {"ok": False, "error": f"database unreachable: {exc}"}
    return {"ok": True, "vendor": connection.vendor, "submissions": backlog}


def broker_health(timeout: float = 2.0) -> dict[str, Any]:
    from web.config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - kombu raises transport-specific errors; all mean unreachable
        return {"ok": False, "error": f"broker unreachable: {exc}"}
    return {"ok": True}


def workers_health(timeout: float = 3.0) -> dict[str, Any]:
    """Every worker's answer to ``sandbox_health``; not ok without workers or with an unready backend."""
    from web.config.celery import app

    try:
        replies = app.control.broadcast("sandbox_health", reply=True, timeout=timeout) or []
    except Exception as exc:  # noqa: BLE001 - as above
        return {"ok": False, "error": f"could not ask the workers: {exc}", "workers": {}}
    workers = {name: answer for reply in replies for name, answer in reply.items()}
    if not workers:
        return {"ok": False, "error": f"no grading worker answered within {timeout:g} s", "workers": {}}
    unready = sorted(name for name, answer in workers.items() if not (isinstance(answer, dict) and answer.get("ready")))
    result: dict[str, Any] = {"ok": not unready, "workers": workers}
    if unready:
        result["error"] = f"sandbox backend not ready on {', '.join(unready)}"
    return result


def service_health(*, workers: bool, timeout: float = 3.0) -> dict[str, Any]:
    checks = {"database": _timed(database_health), "broker": _timed(lambda: broker_health(timeout))}
    if workers:
        checks["workers"] = _timed(lambda: workers_health(timeout))
    return {"ok": all(c["ok"] for c in checks.values()), "checks": checks}


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    """What anyone may see: which checks pass. Errors, hosts and counts are for staff."""
    return {"ok": report["ok"], "checks": {name: {"ok": check["ok"]} for name, check in report["checks"].items()}}


def _monitor(request: HttpRequest) -> bool:
    """Whether the request carries the configured HEALTHZ_TOKEN as a bearer token."""
    token = settings.HEALTHZ_TOKEN
    sent = request.headers.get("Authorization", "")
    return bool(token) and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    staff = bool(getattr(request.user, "is_staff", False))
    workers = request.GET.get("workers") in ("1", "true", "yes")
    if workers and not (staff or _monitor(request)):
        return JsonResponse(
            {"ok": False, "error": "asking the grading workers (?workers=1) needs a staff session or the HEALTHZ_TOKEN bearer token"},
            status=403,
        )
    report = service_health(workers=workers)
    return JsonResponse(report if staff or _monitor(request) else _summary(report), status=200 if report["ok"] else 503)
