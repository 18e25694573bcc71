"""`make compose-check`: bring the production stack up from the built images and put it through what an operator relies on.

Runs docker-compose on a throwaway project (its own name, volumes, a fresh
.env made by scripts/compose-env.sh's rules, a free port), then checks, in
order, and prints one line per step with its time:

1. every service healthy; the worker runs as a non-root user and has no
   Docker socket; the launcher refuses what a compromised worker would try
   (a privileged container) from inside the worker container;
2. the first admin is created as the README says (createsuperuser), a
   candidate and an API token; the candidate's submission of a reference,
   made through the API, is graded accepted;
3. the worker is scaled to two replicas, both answer;
4. a burst of submissions is queued, Redis is restarted while they wait,
   and every one ends graded, each exactly once (attempts == 1), none lost.

Finally the project is taken down with its volumes (``--keep`` leaves it up).
Exit status 0 only if every step passed. Needs the images of
``scripts/build-app-image.sh`` and ``make sandbox-image``; takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PROJECT = "mlprepcheck"
CHALLENGE = "implement-engine-execute"  # the python runtime: the quickest grading of the catalogue
BURST = 6


class CheckFailed(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Stack:
    def __init__(self, env_file: Path, port: int) -> None:
        self.env_file = env_file
        self.base = f"http://127.0.0.1:{port}"

    def compose(self, *args: str, check: bool = True, timeout: float = 900, input: str | None = None) -> subprocess.CompletedProcess[str]:
        command = ["docker-compose", "-p", PROJECT, "--env-file", str(self.env_file), "-f", str(REPO / "docker-compose.yml"), *args]
        # Only the .env speaks: none of the caller's settings leak into the stack.
        env = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "DOCKER_HOST", "LANG"}}
        result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, input=input)
        if check and result.returncode != 0:
            raise CheckFailed(f"docker-compose {' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
        return result

    def manage(self, *args: str, env: dict[str, str] | None = None) -> str:
        flags = [item for k, v in (env or {}).items() for item in ("-e", f"{k}={v}")]
        return self.compose("exec", "-T", *flags, "web", "python", "manage.py", *args).stdout

    def worker(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.compose("exec", "-T", "worker", *command, check=check)

    def api(self, method: str, path: str, token: str, data: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(  # noqa: S310 - http:// to the stack this script started
            self.base + path, method=method, data=json.dumps(data).encode() if data is not None else None,
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - same
            return json.loads(response.read())

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.base + "/healthz", timeout=5) as response:  # noqa: S310 - same
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False


def wait_for(what: str, condition: Any, timeout: float, every: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(every)
    raise CheckFailed(f"timed out after {timeout:.0f} s waiting for {what}")


def wait_graded(stack: Stack, token: str, urls: list[str], timeout: float) -> list[dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}

    def all_done() -> bool:
        for url in urls:
            if url not in done:
                body = stack.api("GET", url, token)
                if body.get("done"):
                    done[url] = body
        return len(done) == len(urls)

    wait_for(f"{len(urls)} verdict(s)", all_done, timeout)
    return [done[url] for url in urls]


def reference_code() -> str:
    folder = next(REPO.glob(f"challenges/*/{CHALLENGE}"))
    return next((folder / "reference").glob("*.py")).read_text()


def write_env(folder: Path, port: int) -> Path:
    env = folder / ".env"
    lines = []
    for line in (REPO / ".env.example").read_text().splitlines():
        key = line.split("=", 1)[0]
        value = {
            "SECRET_KEY": secrets.token_hex(32), "POSTGRES_PASSWORD": secrets.token_hex(24), "REDIS_PASSWORD": secrets.token_hex(24),
            "WEB_PORT": str(port), "SANDBOX_POOL": "python=1",
        }.get(key)  # fmt: skip
        lines.append(f"{key}={value}" if value is not None and not line.startswith("#") else line)
    env.write_text("\n".join(lines) + "\n")
    return env


def step(name: str) -> Any:
    def wrap(fn: Any) -> Any:
        def run(*args: Any) -> Any:
            start = time.monotonic()
            result = fn(*args)
            print(f"ok   {name} ({time.monotonic() - start:.1f} s)", flush=True)
            return result

        return run

    return wrap


@step("stack up, every service healthy")
def bring_up(stack: Stack) -> None:
    stack.compose("up", "-d")

    def all_healthy() -> bool:
        ps = stack.compose("ps", check=False).stdout
        rows = [line for line in ps.splitlines() if line.startswith(PROJECT)]
        return bool(rows) and all("(healthy)" in line for line in rows) and stack.healthy()

    wait_for("every service to be healthy", all_healthy, 600, every=5)


@step("worker: non-root, no Docker socket, launcher refuses a privileged container")
def worker_confined(stack: Stack) -> None:
    uid = stack.worker("id", "-u").stdout.strip()
    if uid == "0":
        raise CheckFailed("the worker runs as root")
    if stack.worker("test", "-e", "/var/run/docker.sock", check=False).returncode == 0:
        raise CheckFailed("the worker has the Docker engine's socket")
    attempt = (
        "import docker, sys\n"
        "from sandbox.image import image_tag\n"
        "try:\n"
        "    docker.from_env().containers.create(image_tag(), command=['python'], privileged=True)\n"
        "except docker.errors.APIError as exc:\n"
        "    sys.exit(0 if 'refused by the sandbox launcher' in str(exc) else 3)\n"
        "sys.exit(4)\n"
    )
    result = stack.worker("python", "-c", attempt, check=False)
    if result.returncode != 0:
        detail = f"exit {result.returncode}: {result.stderr[-500:]}"
        raise CheckFailed(f"a privileged container from the worker was not refused by the launcher ({detail})")
    logs = stack.compose("logs", "--no-color", "launcher").stdout
    if "launcher.refused" not in logs and "refused POST /containers/create" not in logs:
        raise CheckFailed("the launcher did not log its refusal")


@step("admin created as the README says; a candidate's reference graded accepted through the API")
def first_grading(stack: Stack) -> tuple[str, list[str]]:
    admin_password = {"DJANGO_SUPERUSER_PASSWORD": secrets.token_hex(12)}
    stack.manage("createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com", env=admin_password)
    tokens = []
    for name in ("cand1", "cand2"):
        create = f"from django.contrib.auth.models import User; User.objects.create_user({name!r}, password={secrets.token_hex(12)!r})"
        stack.manage("shell", "-c", create)
        tokens.append(stack.manage("api_token", name).strip().splitlines()[-1])
    created = stack.api("POST", f"/api/v1/challenges/{CHALLENGE}/submissions/", tokens[0], {"kind": "submit", "code": reference_code()})
    (result,) = wait_graded(stack, tokens[0], [created["url"]], 300)
    if result["verdict"] != "accepted":
        raise CheckFailed(f"the reference was graded {result['verdict']}: {result.get('message')}")
    return tokens[0], tokens


@step("worker scaled to two replicas, both answer")
def scale_workers(stack: Stack) -> None:
    stack.compose("up", "-d", "--scale", "worker=2")

    def two_answer() -> bool:
        out = stack.worker("celery", "-A", "web.config", "inspect", "ping", "--timeout", "5", check=False).stdout
        return out.count("pong") >= 2

    wait_for("two workers to answer a ping", two_answer, 300, every=5)


@step(f"{BURST} submissions queued, Redis restarted mid-queue, each graded exactly once")
def restart_redis_mid_queue(stack: Stack, tokens: list[str]) -> None:
    code = reference_code()
    sent = []
    for i in range(BURST):
        token = tokens[i % len(tokens)]
        created = stack.api("POST", f"/api/v1/challenges/{CHALLENGE}/submissions/", token, {"kind": "submit", "code": code})
        sent.append((token, created["url"], created["id"]))
    waiting = sum(1 for token, url, _ in sent if not stack.api("GET", url, token).get("done"))
    if waiting == 0:
        raise CheckFailed("every submission was graded before Redis restarted: nothing was mid-queue")
    stack.compose("restart", "redis")
    print(f"     {waiting} of {BURST} were waiting when Redis restarted", flush=True)
    results = [wait_graded(stack, token, [url], 600)[0] for token, url, _ in sent]
    wrong = [r for r in results if r["verdict"] != "accepted"]
    if wrong:
        raise CheckFailed(f"{len(wrong)} of {BURST} were not accepted: {[r['verdict'] for r in wrong]}")
    ids = ",".join(str(i) for _, _, i in sent)
    query = f"from web.submissions.models import Submission as S; print(sorted(S.objects.filter(pk__in=[{ids}]).values_list('attempts', flat=True)))"
    counts = stack.manage("shell", "-c", query).strip().splitlines()[-1]  # the shell prints its auto-imports first
    if counts != str([1] * BURST):
        raise CheckFailed(f"grading attempts per submission after the restart: {counts} (each must be graded exactly once)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="leave the stack up at the end")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="compose-check-"))
    port = free_port()
    stack = Stack(write_env(folder, port), port)
    started = time.monotonic()
    try:
        stack.compose("down", "-v", "--remove-orphans", check=False)
        bring_up(stack)
        worker_confined(stack)
        _, tokens = first_grading(stack)
        scale_workers(stack)
        restart_redis_mid_queue(stack, tokens)
    except CheckFailed as exc:
        print(f"FAIL {exc}", file=sys.stderr)
        print(stack.compose("logs", "--no-color", "--tail", "40", check=False).stdout[-6000:], file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            stack.compose("down", "-v", "--remove-orphans", check=False)
    print(f"compose-check passed in {time.monotonic() - started:.0f} s (port {port}, project {PROJECT})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
