"""The sandbox launcher: the only holder of the Docker engine's socket, a filtering proxy in front of it.

Place in the flow: in the compose stack the worker runs as an unprivileged
user with no Docker socket. Its docker backend (``sandbox/docker.py``, the
Docker SDK, unchanged) is pointed at this launcher's Unix socket instead
(``DOCKER_HOST=unix:///run/mlprep-launcher/docker.sock``). For each request
the launcher reads the request line, headers and body, asks the policy
(``sandbox/launcher_policy.py``) whether the sandbox needs it, checks that a
container it names carries the sandbox label, and only then forwards it to
the engine, with ``Connection: close`` so that exactly one checked request
passes per connection. An attach (an HTTP upgrade) then carries the job and
the runner's frames both ways until the container ends. Everything else is
answered 403 with the reason, in the engine's error format (so the SDK
raises an APIError naming it), and logged as ``launcher.refused``.

Run: ``python -m sandbox.launcher --listen /run/mlprep-launcher/docker.sock
--owner mlprep`` as root next to the engine's socket (docker-compose.yml,
service ``launcher``). It imports nothing of Django or of the grader.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import logging
import os
import pwd
import select
import signal
import socket
import socketserver
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import h11

from sandbox.labels import LABEL
from sandbox.launcher_policy import Decision, Policy, decide, split_target

log = logging.getLogger("sandbox.launcher")

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 1024 * 1024  # a create body is about 2 KiB
# The worker's headers the engine gets (the rest are dropped; Host, Connection, Upgrade, Content-Type and
# Content-Length are the launcher's own).
_FORWARDED_HEADERS = {b"user-agent", b"accept"}


class _EngineConnection(http.client.HTTPConnection):
    """HTTP over the engine's Unix socket, for the launcher's own label look-ups."""

    def __init__(self, path: str, timeout: float = 30.0) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class LauncherServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True  # a stuck attach never keeps the launcher from exiting

    def __init__(self, listen: str, engine: str, policy: Policy) -> None:
        self.engine = engine
        self.policy = policy
        with contextlib.suppress(FileNotFoundError):
            os.unlink(listen)  # a socket file left by a previous launcher
        super().__init__(listen, _Handler)

    def sandbox_labelled(self, container: str) -> bool | None:
        """True if the engine has this container with the sandbox label; None if it has no such container."""
        connection = _EngineConnection(self.engine)
        try:
            connection.request("GET", f"/containers/{quote(container, safe='')}/json")
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        if response.status == 404:
            return None
        if response.status != 200:
            return False
        labels = (json.loads(data).get("Config") or {}).get("Labels") or {}
        return bool(labels.get(LABEL) == "1")


class _Handler(socketserver.BaseRequestHandler):
    """One connection, one request: read it strictly (h11), ask the policy, forward what was checked, relay the answer.

    Both directions go through h11, a kept HTTP/1.1 library, so nothing that
    its parser does not accept (bare CR or LF in a header, two Content-Lengths,
    a body past its length, a second request behind the first) ever reaches
    the engine. The request the engine gets is written anew from the checked
    parts: the method, the target and body as the policy read them, and only
    the headers the Docker SDK needs. An attach switches to raw bytes only
    once the engine has answered ``101 Switching Protocols``; any other answer
    ends the connection, so no bytes the worker sends after the head can be
    read by the engine as a request of their own.
    """

    server: LauncherServer
    request: socket.socket

    def handle(self) -> None:
        self.request.settimeout(60)
        worker = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        try:
            received = self._read_request(worker)
        except h11.RemoteProtocolError as exc:
            self._answer(400, f"bad request: {exc}")
            return
        except _TooLarge as exc:
            self._refuse(exc.method, exc.target, str(exc), status=exc.status)
            return
        except OSError:
            return
        if received is None:
            return
        request, body = received
        method, target = request.method.decode("ascii"), request.target.decode("ascii")
        decision = decide(method, target, body, self.server.policy)
        if decision.allowed and decision.container is not None:
            decision = self._check_label(decision)
        if not decision.allowed:
            self._refuse(method, target, decision.reason, status=404 if decision.reason.startswith("no such") else 403)
            return
        self._forward(worker, method, request, decision)

    def _read_request(self, worker: h11.Connection) -> tuple[h11.Request, bytes] | None:
        """The request and its whole body, or None if the worker went away first."""
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = worker.next_event()
            if event is h11.NEED_DATA:
                worker.receive_data(self.request.recv(65536))
            elif isinstance(event, h11.Request):
                if event.http_version != b"1.1":  # the Docker SDK speaks HTTP/1.1 and nothing else
                    raise h11.RemoteProtocolError(f"HTTP/{event.http_version.decode('ascii', 'replace')} is not spoken here")
                request = event
                _refuse_oversized(event)
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage) and request is not None:
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None
            else:  # PAUSED before the end of a request cannot happen for a server; treat anything else as malformed
                raise h11.RemoteProtocolError(f"unexpected {type(event).__name__}")

    def _check_label(self, decision: Decision) -> Decision:
        assert decision.container is not None
        labelled = self.server.sandbox_labelled(decision.container)
        if labelled is None:
            return Decision.refuse(f"no such container: {decision.container}")
        if not labelled:
            return Decision.refuse(f"container {decision.container} is not a sandbox (no {LABEL} label)")
        return decision

    def _refuse(self, method: str, target: str, reason: str, *, status: int) -> None:
        path, _ = split_target(target)
        # The event is in the line itself too: operators grep plain-text logs for it (README: Deploying).
        extra = {"event": "launcher.refused", "method": method, "path": path, "reason": reason}
        log.warning("launcher.refused %s %s: %s", method, path, reason, extra=extra)
        self._answer(status, f"refused by the sandbox launcher: {reason}")

    def _answer(self, status: int, message: str) -> None:
        body = json.dumps({"message": message}).encode()
        reason = http.client.responses.get(status, "Error")
        head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        with contextlib.suppress(OSError):
            self.request.sendall(head.encode() + body)

    def _forward(self, worker: h11.Connection, method: str, request: h11.Request, decision: Decision) -> None:
        engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            engine.connect(self.server.engine)
        except OSError as exc:
            engine.close()
            self._answer(502, f"the Docker engine is not reachable: {exc}")
            return
        to_engine = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        headers: list[tuple[bytes, bytes]] = [(b"Host", b"docker")]
        headers += [(name, value) for name, value in request.headers if name.lower() in _FORWARDED_HEADERS]
        if decision.upgrade:
            headers += [(b"Connection", b"Upgrade"), (b"Upgrade", b"tcp")]
        else:
            headers.append((b"Connection", b"close"))  # one checked request per connection, never a second unchecked one
        if decision.body:
            headers += [(b"Content-Type", b"application/json"), (b"Content-Length", str(len(decision.body)).encode())]
        elif method in {"POST", "PUT"}:
            headers.append((b"Content-Length", b"0"))
        try:
            out = to_engine.send(h11.Request(method=method, target=decision.target, headers=headers)) or b""
            if decision.body:
                out += to_engine.send(h11.Data(data=decision.body)) or b""
            out += to_engine.send(h11.EndOfMessage()) or b""
            engine.settimeout(None)  # a wait or an event stream lasts as long as the sandbox
            engine.sendall(out)
            if self._relay_answer(worker, to_engine, engine) and decision.upgrade:
                self._pipe(engine, worker.trailing_data[0], to_engine.trailing_data[0])
        except (OSError, h11.ProtocolError) as exc:
            log.warning("launcher: the exchange with the engine broke off: %s", exc, extra={"event": "launcher.engine_error"})
        finally:
            with contextlib.suppress(OSError):
                engine.close()

    def _relay_answer(self, worker: h11.Connection, to_engine: h11.Connection, engine: socket.socket) -> bool:
        """Relay the engine's answer through h11 on both sides; True once the engine switched protocols (an attach)."""
        self.request.settimeout(None)
        while True:
            event = to_engine.next_event()
            if event is h11.NEED_DATA:
                to_engine.receive_data(engine.recv(65536))
                continue
            if event is h11.PAUSED:  # after a 101: what follows is the attach's raw stream
                return True
            if isinstance(event, h11.ConnectionClosed):
                return False
            if isinstance(event, h11.InformationalResponse):
                self.request.sendall(worker.send(event) or b"")  # after a 101, h11 pauses next
                continue
            if isinstance(event, h11.Response):
                # One answer per connection: the worker's side closes after it.
                kept = [(n, v) for n, v in event.headers if n.lower() != b"connection"] + [(b"connection", b"close")]
                event = h11.Response(status_code=event.status_code, headers=kept, reason=event.reason, http_version=b"1.1")
            assert isinstance(event, h11.Event)
            self.request.sendall(worker.send(event) or b"")
            if isinstance(event, h11.EndOfMessage):
                return False

    def _pipe(self, engine: socket.socket, from_worker: bytes, from_engine: bytes) -> None:
        """After the engine switched protocols: copy the attach's bytes both ways until the engine ends it."""
        client = self.request
        client.settimeout(None)
        engine.settimeout(None)
        if from_engine:
            client.sendall(from_engine)
        if from_worker:
            engine.sendall(from_worker)
        sockets = [engine, client]
        while sockets:
            readable, _, _ = select.select(sockets, [], [], 3600)
            if not readable:
                return  # an hour without a byte: nothing of the sandbox's lasts that long
            for source in readable:
                sink = client if source is engine else engine
                try:
                    chunk = source.recv(65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    if source is engine:
                        return  # the engine finished (or the container ended): close the worker's side
                    sockets.remove(client)  # the worker is done sending; keep reading the engine
                    continue
                try:
                    sink.sendall(chunk)
                except OSError:
                    return


class _TooLarge(Exception):
    def __init__(self, method: str, target: str, message: str, status: int) -> None:
        super().__init__(message)
        self.method, self.target, self.status = method, target, status


def _refuse_oversized(request: h11.Request) -> None:
    """Refuse a chunked body, or one longer than a sandbox ever sends, before reading it."""
    method, target = request.method.decode("ascii", "replace"), request.target.decode("ascii", "replace")
    for name, value in request.headers:
        if name == b"transfer-encoding":
            raise _TooLarge(method, target, "chunked request bodies are not accepted", 411)
        if name == b"content-length" and int(value) > MAX_BODY_BYTES:
            raise _TooLarge(method, target, f"a request body of {int(value)} bytes is more than the sandbox ever sends", 413)


def _owner_uid(owner: str) -> int:
    """The uid of a user name or numeric id."""
    return int(owner) if owner.isdigit() else pwd.getpwnam(owner).pw_uid


def serve(listen: str, engine: str, policy: Policy, owner: str | None) -> None:
    server = LauncherServer(listen, engine, policy)
    # The worker's user owns the socket; the group is the launcher's own, so
    # its health check (same user, no capabilities) can connect; nobody else.
    os.chmod(listen, 0o660)
    if owner:
        os.chown(listen, _owner_uid(owner), os.getgid())
    log.info("launcher.started: listening on %s", listen, extra={"event": "launcher.started", "listen": listen, "image": policy.image})

    def stop(signum: int, _frame: object) -> None:
        # serve_forever runs on this thread; shutdown() waits for it, so ask from another one.
        log.info("launcher.stopped: %s", signal.Signals(signum).name, extra={"event": "launcher.stopped"})
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with server:
        server.serve_forever()
    # Attaches still running are daemon threads: the sandboxes they carry end with their worker's stream.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(listen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.launcher", description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", required=True, help="the Unix socket to create for the worker")
    parser.add_argument("--engine", default="/var/run/docker.sock", help="the Docker engine's socket")
    parser.add_argument("--owner", help="user (name or uid) the socket is given to: the worker's")
    parser.add_argument("--image", default=os.environ.get("SANDBOX_IMAGE"), help="the sandbox image (default: this checkout's tag)")
    parser.add_argument("--runtime", action="append", default=[], help="an OCI runtime the worker may ask for (e.g. runsc); repeatable")
    args = parser.parse_args(argv)
    if not args.image:
        from sandbox.image import image_tag

        args.image = image_tag()
    runtimes = set(args.runtime) | {r for r in os.environ.get("SANDBOX_DOCKER_RUNTIME", "").split(",") if r}
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
    Path(args.listen).parent.mkdir(parents=True, exist_ok=True)
    serve(args.listen, args.engine, Policy(image=args.image, runtimes=frozenset(runtimes)), args.owner)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
