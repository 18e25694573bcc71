"""The launcher cannot be talked round: it parses strictly and forwards only what it checked (issue 28).

A create body with ``HostConfig`` twice, the first privileged with the host's
root bound, the last a clean sandbox one, was answered 201: Python's json
kept the last key and checked it, Docker's Go decoder merged both. These
tests send that body and its variants (case-variant keys, duplicates at every
depth, NaN, deep nesting, a pipelined second request, malformed HTTP) to the
policy and to a real launcher in front of the real engine, fuzz the create
body, and inspect every container the engine did create: each must carry
the sandbox's hardening as the engine itself reports it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from sandbox.labels import LABEL, LABEL_WORKER
from sandbox.launcher_policy import Refused, canonical_json, check_create, decide, strict_json
from tests.sandbox.test_launcher import POLICY, launcher, needs_docker, sandbox_create_body  # noqa: F401 - launcher is a fixture

REPO = Path(__file__).resolve().parents[2]
CREATE = "/v1.41/containers/create"
ATTACK_HOST = {"Privileged": True, "Binds": ["/:/host", "/var/run/docker.sock:/var/run/docker.sock"], "GroupAdd": ["docker"]}


def spliced(body: dict[str, Any], extra_first: str) -> str:
    """``body`` as JSON text with ``extra_first`` (a raw ``"key": value`` member) written before its own members."""
    text = json.dumps(body)
    return "{" + extra_first + ", " + text[1:]


def clean_body(image: str = POLICY.image, worker: str = "host:1") -> dict[str, Any]:
    body = sandbox_create_body()
    body["Image"] = image
    body["Labels"][LABEL_WORKER] = worker
    return body


def attack_texts(body: dict[str, Any]) -> dict[str, str]:
    """The duplicate-key body of the issue and its variants, each with a clean sandbox body as the last copy."""
    host = json.dumps(ATTACK_HOST)
    return {
        "HostConfig twice": spliced(body, f'"HostConfig": {host}'),
        "hostConfig before HostConfig": spliced(body, f'"hostConfig": {host}'),
        "HOSTCONFIG before HostConfig": spliced(body, f'"HOSTCONFIG": {host}'),
        "a long s (U+017F) for the s": spliced(body, f'"Ho\\u017ftconfig": {host}'),
        "escaped name": spliced(body, f'"\\u0048ostConfig": {host}'),
        "Image twice": spliced(body, '"Image": "debian:bookworm"'),
        "User twice": spliced(body, '"User": "0:0"'),
        "NetworkMode twice, nested": json.dumps(body).replace('"NetworkMode": "none"', '"NetworkMode": "host", "NetworkMode": "none"'),
        "Kelvin sign, nested": json.dumps(body).replace('"NetworkMode": "none"', '"Networ\\u212aMode": "host", "NetworkMode": "none"'),
        "label twice": json.dumps(body).replace(f'"{LABEL}": "1"', f'"{LABEL}": "0", "{LABEL}": "1"'),
        "ulimit bound twice": json.dumps(body).replace('"Hard": 0', '"Hard": -1, "Hard": 0'),
    }


# --- The policy's reading of a body -------------------------------------------------------------------


@pytest.mark.parametrize("name", list(attack_texts(clean_body())))
def test_a_key_given_twice_in_any_spelling_is_refused_at_every_depth(name: str) -> None:
    text = attack_texts(clean_body())[name]
    decision = decide("POST", CREATE, text.encode(), POLICY)
    assert not decision.allowed, name
    assert "twice" in decision.reason, decision.reason


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"Image": NaN}', "NaN"),
        ('{"Memory": Infinity}', "Infinity"),
        ("[" * 50 + "]" * 50, "nests deeper"),
        ("[" * 100_000 + "]" * 100_000, "nests deeper"),
        ('{"a": 1} {"b": 2}', "not JSON"),
        ('{"Image": "x"', "not JSON"),
    ],
)
def test_a_body_the_engine_could_read_differently_is_refused(text: str, named: str) -> None:
    decision = decide("POST", CREATE, text.encode(), POLICY)
    assert not decision.allowed and named in decision.reason


def test_a_body_that_is_not_utf8_is_refused() -> None:
    decision = decide("POST", CREATE, b'{"Image": "\xff"}', POLICY)
    assert not decision.allowed and "not JSON" in decision.reason


def test_a_case_variant_key_alone_is_refused_as_unknown() -> None:
    body = clean_body()
    body["hostconfig"] = body.pop("HostConfig")
    decision = decide("POST", CREATE, json.dumps(body).encode(), POLICY)
    assert not decision.allowed and "hostconfig" in decision.reason


def test_what_is_forwarded_is_the_checked_body_written_out_again() -> None:
    body = clean_body()
    text = json.dumps(body, indent=3).replace('"HostConfig"', '"\\u0048ostConfig"')
    decision = decide("POST", CREATE, text.encode(), POLICY)
    assert decision.allowed, decision.reason
    assert decision.body == canonical_json(body) and decision.body != text.encode()
    assert json.loads(decision.body) == body
    assert decision.target == CREATE


def test_the_target_is_written_out_again_from_what_was_checked() -> None:
    decision = decide("POST", "/v1.41/containers/abc/attach?stdin=1&stdout=1&stream=1", b"", POLICY)
    assert decision.allowed and decision.target == "/v1.41/containers/abc/attach?stdin=1&stdout=1&stream=1"
    events = decide("GET", '/v1.41/events?filters={"container":["abc"]}', b"", POLICY)
    assert events.allowed and events.target == "/v1.41/events?filters=%7B%22container%22%3A%5B%22abc%22%5D%7D"
    twice = decide("GET", '/v1.41/events?filters={"container":["abc"],"container":["xyz"]}', b"", POLICY)
    assert not twice.allowed and "twice" in twice.reason


def mutations(rng: random.Random, text: str) -> str:
    """One random change of a create body's text: a byte, a key's case, a member repeated, a value swapped."""
    kind = rng.randrange(5)
    if kind == 0:  # one character changed
        i = rng.randrange(len(text))
        return text[:i] + rng.choice('{}[]",:0123456789 aAzZ\\\u017f\u212a') + text[i + 1 :]
    if kind == 1:  # a key re-cased
        keys = [k for k in ("HostConfig", "Image", "User", "NetworkMode", "Privileged", "Cmd", "Labels", "Tmpfs", "Memory") if f'"{k}"' in text]
        if keys:
            key = rng.choice(keys)
            return text.replace(f'"{key}"', f'"{"".join(c.upper() if rng.random() < 0.5 else c.lower() for c in key)}"', 1)
    if kind == 2:  # a hostile member added at a random object start
        starts = [i for i, c in enumerate(text) if c == "{"]
        i = rng.choice(starts)
        member = rng.choice(
            ['"Privileged": true', '"Binds": ["/:/host"]', '"NetworkMode": "host"', '"HostConfig": {"Privileged": true}', '"User": "0:0"']
        )
        return text[: i + 1] + member + ("," if text[i + 1] != "}" else "") + text[i + 1 :]
    if kind == 3:  # a member duplicated in place
        try:
            body = json.loads(text)
        except ValueError:
            return text
        if not isinstance(body, dict) or not body:
            return text
        key = rng.choice(list(body))
        return spliced(body, f"{json.dumps(key)}: {json.dumps(body[key])}")
    return text.replace('"none"', rng.choice(['"host"', '"bridge"', '"none"']), 1)


def test_no_fuzzed_body_is_forwarded_unless_it_is_a_hardened_sandbox() -> None:
    """2,000 seeded mutations: each is refused, or forwarded as a canonical body that passes the whole policy."""
    rng = random.Random(28)
    base = json.dumps(clean_body())
    allowed = 0
    for _ in range(2000):
        text = base
        for _ in range(rng.randint(1, 3)):
            text = mutations(rng, text)
        decision = decide("POST", CREATE, text.encode(), POLICY)
        if decision.allowed:
            allowed += 1
            forwarded = strict_json(decision.body)
            check_create(forwarded, POLICY)
            assert canonical_json(forwarded) == decision.body
            assert forwarded["HostConfig"]["NetworkMode"] == "none" and "Privileged" not in forwarded["HostConfig"]
    assert 0 < allowed < 2000  # the fuzz reached both sides (a changed space, say, keeps a body valid)


def test_strict_json_names_the_repeated_key() -> None:
    with pytest.raises(Refused, match='"HostConfig" twice'):
        strict_json(b'{"HostConfig": {}, "hostconfig": {}}')


# --- Through a real launcher, in front of the real engine ----------------------------------------------


def raw_exchange(listen: str, data: bytes, timeout: float = 30) -> bytes:
    """Send raw bytes to the launcher's socket and read until it closes the connection."""
    path = listen.removeprefix("unix://")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def http_post(target: str, body: bytes, extra_headers: str = "") -> bytes:
    return (
        f"POST {target} HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def containers_of(worker: str) -> list[Any]:
    import docker

    engine = docker.DockerClient(base_url="unix:///var/run/docker.sock", version="auto")
    try:
        return list(engine.containers.list(all=True, filters={"label": f"{LABEL_WORKER}={worker}"}))
    finally:
        engine.close()


def remove_all(worker: str) -> None:
    import docker

    engine = docker.DockerClient(base_url="unix:///var/run/docker.sock", version="auto")
    try:  # through a client that stays open until done (a closed one would open a connection nobody closes)
        for container in engine.containers.list(all=True, filters={"label": f"{LABEL_WORKER}={worker}"}):
            container.remove(force=True)
    finally:
        engine.close()


def sandbox_image() -> str:
    from sandbox.image import image_tag

    return os.environ.get("SANDBOX_IMAGE") or image_tag()


@needs_docker
def test_the_duplicate_key_attack_and_its_variants_are_refused_by_a_real_launcher(launcher: str) -> None:  # noqa: F811
    worker = f"attack:{uuid.uuid4().hex[:8]}"
    try:
        for name, text in attack_texts(clean_body(sandbox_image(), worker)).items():
            answer = raw_exchange(launcher, http_post(CREATE, text.encode()))
            assert answer.startswith(b"HTTP/1.1 403"), (name, answer[:200])
            assert b"refused by the sandbox launcher" in answer and b"twice" in answer, name
        assert containers_of(worker) == []
        # The same body without the first copy is a sandbox, created.
        answer = raw_exchange(launcher, http_post(CREATE, json.dumps(clean_body(sandbox_image(), worker)).encode()))
        assert answer.startswith(b"HTTP/1.1 201"), answer[:300]
        assert len(containers_of(worker)) == 1
    finally:
        remove_all(worker)


@needs_docker
def test_a_request_behind_the_first_never_reaches_the_engine(launcher: str) -> None:  # noqa: F811
    worker = f"pipelined:{uuid.uuid4().hex[:8]}"
    second = http_post(CREATE, json.dumps(clean_body(sandbox_image(), worker)).encode())
    try:
        answer = raw_exchange(launcher, b"GET /_ping HTTP/1.1\r\nHost: docker\r\n\r\n" + second)
        assert answer.startswith(b"HTTP/1.1 200") and answer.count(b"HTTP/1.1 ") == 1, answer[:300]
        # A body longer than its Content-Length: the rest is never read as a request either.
        answer = raw_exchange(launcher, http_post("/v1.41/containers/abc/kill", b"") + second)
        assert answer.count(b"HTTP/1.1 ") == 1
        time.sleep(0.5)
        assert containers_of(worker) == []
    finally:
        remove_all(worker)


@needs_docker
@pytest.mark.parametrize(
    ("data", "status"),
    [
        # A bare LF ends a header line for h11 as for the engine: the Content-Length behind it is read, and a ping's body refused.
        (b"GET /_ping HTTP/1.1\r\nHost: docker\r\nX: a\nContent-Length: 5\r\n\r\nhello", b"403"),
        (b"GET /_ping HTTP/1.1\r\nHost: docker\r\nX: a\rContent-Length: 5\r\n\r\nhello", b"400"),  # a bare CR inside a header
        (b"GET /_ping HTTP/1.1\r\nHost: docker\r\nContent-Length : 5\r\n\r\nhello", b"400"),  # a space before the colon
        (b"POST /v1.41/containers/create HTTP/1.1\r\nHost: docker\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}", b"400"),
        (b"POST /v1.41/containers/create HTTP/1.1\r\nHost: docker\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", b"411"),
        (b"POST /v1.41/containers/create HTTP/1.1\r\nHost: docker\r\nContent-Length: 99999999\r\n\r\n", b"413"),
        (b"GET /_ping HTTP/1.1\r\n" + b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n", b"400"),
        (b"GET /_ping HTTP/9.9\r\nHost: docker\r\n\r\n", b"400"),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", b"400"),  # a TLS hello
    ],
)
def test_malformed_http_is_refused_before_anything_is_forwarded(launcher: str, data: bytes, status: bytes) -> None:  # noqa: F811
    answer = raw_exchange(launcher, data)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:300]


@needs_docker
def test_every_container_a_fuzzed_body_creates_is_hardened_as_the_engine_reports_it(launcher: str) -> None:  # noqa: F811
    """40 seeded mutations sent through the launcher; the engine's own inspect of anything created shows the hardening."""
    worker = f"fuzz:{uuid.uuid4().hex[:8]}"
    rng = random.Random(2028)
    base = json.dumps(clean_body(sandbox_image(), worker))
    answered = {b"201": 0, b"403": 0, b"other": 0}
    try:
        for _ in range(40):
            text = mutations(rng, base)
            answer = raw_exchange(launcher, http_post(CREATE, text.encode("utf-8", "surrogatepass")))
            status = answer[9:12]
            answered[status if status in answered else b"other"] += 1
        for container in containers_of(worker):
            host = container.attrs["HostConfig"]
            assert host["Privileged"] is False and not host.get("Binds") and host["NetworkMode"] == "none"
            assert host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"] and not host.get("GroupAdd")
            assert container.attrs["Config"]["User"] == "65534:65534" and container.attrs["Config"]["Image"] == sandbox_image()
        assert answered[b"403"] > 0 and answered[b"201"] + answered[b"403"] + answered[b"other"] == 40
    finally:
        remove_all(worker)


def test_the_launcher_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    """compose stops it with SIGTERM: it must close its socket, remove the file and exit 0, not be killed mid-request."""
    listen = tmp_path / "launcher.sock"
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox.launcher", "--listen", str(listen), "--engine", str(tmp_path / "no-engine.sock"), "--image", "x:y"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not listen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert listen.exists(), "the launcher never listened"
        answer = raw_exchange(f"unix://{listen}", b"GET /_ping HTTP/1.1\r\nHost: docker\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 502")  # alive, and says the engine is not there
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, output.decode(errors="replace")
    assert not listen.exists()
    assert b"launcher.stopped" in output
