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
import socket
import socketserver
import sys
from pathlib import Path
from urllib.parse import quote

from sandbox.labels import LABEL
from sandbox.launcher_policy import Decision, Policy, decide, split_target

log = logging.getLogger("sandbox.launcher")

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 1024 * 1024  # a create body is about 2 KiB
_HOP_HEADERS = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade", "transfer-encoding"}


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
    server: LauncherServer
    request: socket.socket

    def handle(self) -> None:
        self.request.settimeout(60)
        try:
            head, rest = self._read_head()
        except (OSError, ValueError) as exc:
            self._answer(400, f"bad request: {exc}")
            return
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3:
            self._answer(400, "bad request line")
            return
        method, target, _version = parts
        headers = [tuple(line.split(":", 1)) for line in header_lines if ":" in line]
        names = {name.strip().lower(): value.strip() for name, value in headers}
        if "transfer-encoding" in names:
            self._refuse(method, target, "chunked request bodies are not accepted", status=411)
            return
        try:
            length = int(names.get("content-length", "0") or 0)
        except ValueError:
            self._answer(400, "bad Content-Length")
            return
        if not 0 <= length <= MAX_BODY_BYTES:
            self._refuse(method, target, f"a request body of {length} bytes is more than the sandbox ever sends", status=413)
            return
        body = rest
        while len(body) < length:
            chunk = self.request.recv(length - len(body))
            if not chunk:
                return
            body += chunk
        body = body[:length]

        decision = decide(method, target, body, self.server.policy)
        if decision.allowed and decision.container is not None:
            decision = self._check_label(decision)
        if not decision.allowed:
            self._refuse(method, target, decision.reason, status=404 if decision.reason.startswith("no such") else 403)
            return
        self._forward(method, target, [(n.strip(), v.strip()) for n, v in headers], body, decision)

    def _read_head(self) -> tuple[bytes, bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > MAX_HEAD_BYTES:
                raise ValueError("request head too large")
            chunk = self.request.recv(65536)
            if not chunk:
                raise ValueError("connection closed before the request head ended")
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        return head, rest

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
        log.warning("refused %s %s: %s", method, path, reason, extra={"event": "launcher.refused", "method": method, "path": path, "reason": reason})
        self._answer(status, f"refused by the sandbox launcher: {reason}")

    def _answer(self, status: int, message: str) -> None:
        body = json.dumps({"message": message}).encode()
        reason = http.client.responses.get(status, "Error")
        head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        with contextlib.suppress(OSError):
            self.request.sendall(head.encode() + body)

    def _forward(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, decision: Decision) -> None:
        engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            engine.connect(self.server.engine)
        except OSError as exc:
            engine.close()
            self._answer(502, f"the Docker engine is not reachable: {exc}")
            return
        kept = [(n, v) for n, v in headers if n.lower() not in _HOP_HEADERS and n.lower() != "content-length"]
        if decision.upgrade:
            kept += [("Connection", "Upgrade"), ("Upgrade", "tcp")]
        else:
            kept.append(("Connection", "close"))  # one checked request per connection, never a second unchecked one
        if body or method in {"POST", "PUT"}:
            kept.append(("Content-Length", str(len(body))))
        head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in kept) + "\r\n"
        try:
            engine.sendall(head.encode("latin-1") + body)
            self._pipe(engine, both_ways=decision.upgrade)
        finally:
            with contextlib.suppress(OSError):
                engine.close()

    def _pipe(self, engine: socket.socket, *, both_ways: bool) -> None:
        """Copy the engine's answer to the worker; for an attach, the worker's bytes to the engine too."""
        client = self.request
        client.settimeout(None)
        engine.settimeout(None)
        sockets = [engine, client] if both_ways else [engine]
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
    log.info("sandbox launcher listening", extra={"event": "launcher.started", "listen": listen, "image": policy.image})
    with server:
        server.serve_forever()


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
