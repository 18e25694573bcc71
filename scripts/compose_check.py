"""`make compose-check`: bring the production stack up from the built images and put it through what an operator relies on.

Runs docker-compose on a throwaway project (its own name, volumes, a fresh
.env made by scripts/compose-env.sh's rules, a free port), then checks, in
order, and prints one line per step with its time:

0. the images: no setuid or setgid program in the app image; the Postgres
   and Redis images refuse to start with a default, short or missing
   password (deploy/password-rules.sh), before a volume could keep it;
1. every service healthy; the worker runs as a non-root user and has no
   Docker socket; the launcher refuses what a compromised worker would try
   (a privileged container) from inside the worker container;
2. the first admin is created as the README says (createsuperuser), a
   candidate and an API token; the candidate's submission of a reference,
   made through the API, is graded accepted;
3. the worker is scaled to two replicas, both answer;
4. a burst of submissions is queued, Redis is restarted while they wait,
   and every one ends graded, each exactly once (attempts == 1), none lost;
5. an upgrade as the README does it (the app's services recreated, the
   launcher among them) with a burst in flight: every one ends accepted,
   none charged to the candidate as a fault.

Finally the project is taken down with its volumes (``--keep`` leaves it up;
a 20 s stop timeout: the workers' long grace is for upgrades, not for this),
and no sandbox container of its workers may be left running: they stop with
their worker's attach (StdinOnce), and the check removes what is left.
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
import threading
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
                try:
                    body = stack.api("GET", url, token)
                except (urllib.error.URLError, OSError):
                    return False  # web is being recreated (an upgrade): ask again
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
            "WEB_PORT": str(port), "SANDBOX_POOL": "python=1", "MLPREP_TAG": TAG,
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


# The images scripts/build-app-image.sh built, under the tag the stack runs (docker-compose.yml's MLPREP_TAG).
TAG = os.environ.get("MLPREP_TAG") or "latest"
APP_IMAGE, POSTGRES_IMAGE, REDIS_IMAGE = (f"mlprep-{name}:{TAG}" for name in ("app", "postgres", "redis"))


def docker_run(
    image: str, *command: str, env: dict[str, str] | None = None, entrypoint: str | None = None, user: str | None = None
) -> subprocess.CompletedProcess[str]:
    """A throwaway container of ``image`` (no network, removed after), as ``docker run`` gives it."""
    args = ["docker", "run", "--rm", "--network", "none", *([f"--user={user}"] if user else [])]
    args += [f"--env={key}={value}" for key, value in (env or {}).items()]
    args += [f"--entrypoint={entrypoint}"] if entrypoint else []
    return subprocess.run([*args, image, *command], capture_output=True, text=True, timeout=120)


@step("images: no setuid program in the app image; Postgres and Redis refuse weak passwords on first start")
def images_hardened() -> None:
    # As root: the image's own user may not list every folder (/etc/ssl/private), and find then fails.
    found = docker_run(APP_IMAGE, "/", "-xdev", "-type", "f", "-perm", "/6000", entrypoint="find", user="0")
    if found.returncode != 0 or found.stdout.strip():
        raise CheckFailed(f"setuid/setgid programs in {APP_IMAGE}: {found.stdout.split()[:10]} {found.stderr[-300:]}")
    for image, name in ((POSTGRES_IMAGE, "POSTGRES_PASSWORD"), (REDIS_IMAGE, "REDIS_PASSWORD")):
        for weak, says in (("mlprep", "a default password"), ("short1", "too weak"), ("", "not set")):
            started = docker_run(image, env={name: weak} if weak else None)
            if started.returncode == 0 or f"refusing to start: {name} is {says}" not in started.stderr:
                raise CheckFailed(f"{image} with {name}={weak!r}: exit {started.returncode}, {started.stderr[-300:]!r}")


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
    sent = queue_burst(stack, tokens)
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


class Outage:
    """While in its block, asks /healthz twice a second; ``longest``: the longest run of seconds web did not answer."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.longest = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        down_since: float | None = None
        while not self._stop.is_set():
            now = time.monotonic()
            if self.stack.healthy():
                down_since = None
            else:
                down_since = now if down_since is None else down_since
                self.longest = max(self.longest, now - down_since)
            self._stop.wait(0.5)

    def __enter__(self) -> Outage:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def worker_ids() -> set[str]:
    """The container ids (12 characters: a container's hostname) of every worker of the project, running or not."""
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=com.docker.compose.project={PROJECT}", "--filter", "label=com.docker.compose.service=worker"],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    return {line[:12] for line in out.split()}


def queue_burst(stack: Stack, tokens: list[str]) -> list[tuple[str, str, int]]:
    sent = []
    for i in range(BURST):
        token = tokens[i % len(tokens)]
        created = stack.api("POST", f"/api/v1/challenges/{CHALLENGE}/submissions/", token, {"kind": "submit", "code": reference_code()})
        sent.append((token, created["url"], created["id"]))
    return sent


@step(f"an upgrade (web, worker, beat and launcher recreated) with {BURST} submissions in flight: all accepted")
def upgrade_mid_queue(stack: Stack, tokens: list[str], workers: set[str]) -> None:
    workers |= worker_ids()
    sent = queue_burst(stack, tokens)
    # What README's `docker-compose up -d` does after a new image: recreates the application's services. Workers
    # finish what they hold (warm shutdown); what waits in Redis goes to the new ones; a grading cut by the
    # launcher's restart is a platform fault, graded again.
    outage = Outage(stack)
    with outage:
        stack.compose("up", "-d", "--force-recreate", "--no-deps", "--scale", "worker=2", "launcher", "worker", "web", "beat")
        wait_for("web to answer again", stack.healthy, 600, every=1)
    print(f"     web did not answer for {outage.longest:.0f} s while it was recreated", flush=True)
    results = [wait_graded(stack, token, [url], 900)[0] for token, url, _ in sent]
    workers |= worker_ids()
    wrong = [(r["verdict"], r.get("message", "")[:200]) for r in results if r["verdict"] != "accepted"]
    if wrong:
        raise CheckFailed(f"{len(wrong)} of {BURST} submissions in flight through the upgrade were not accepted: {wrong}")


def no_sandbox_left(workers: set[str]) -> int:
    """After `down`: wait for the sandboxes of the project's workers to stop, remove them; how many were still running."""

    def ours(state: str | None = None) -> list[str]:
        args = ["docker", "ps", "-a", "--filter", "label=mlprep.sandbox", "--format", '{{.ID}} {{.State}} {{.Label "mlprep.worker"}}']
        rows = [line.split() for line in subprocess.run(args, capture_output=True, text=True, check=False).stdout.splitlines()]
        return [row[0] for row in rows if len(row) == 3 and row[2].split(":")[0] in workers and (state is None or row[1] == state)]

    # A sandbox whose worker went mid-job (down's 20 s stop timeout) finishes that job, bounded by its package's
    # wall clock, then reads the end of its stdin and exits; an idle one exits at once.
    deadline = time.monotonic() + 300
    while ours("running") and time.monotonic() < deadline:
        time.sleep(2)
    running = len(ours("running"))
    leftovers = ours()
    if leftovers:
        subprocess.run(["docker", "rm", "-f", *leftovers], capture_output=True, check=False)
    return running


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="leave the stack up at the end")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="compose-check-"))
    port = free_port()
    stack = Stack(write_env(folder, port), port)
    started = time.monotonic()
    workers: set[str] = set()
    try:
        stack.compose("down", "-v", "--remove-orphans", "-t", "20", check=False)
        images_hardened()
        bring_up(stack)
        worker_confined(stack)
        _, tokens = first_grading(stack)
        scale_workers(stack)
        restart_redis_mid_queue(stack, tokens)
        upgrade_mid_queue(stack, tokens, workers)
    except CheckFailed as exc:
        print(f"FAIL {exc}", file=sys.stderr)
        print(stack.compose("logs", "--no-color", "--tail", "40", check=False).stdout[-6000:], file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            workers |= worker_ids()
            stack.compose("down", "-v", "--remove-orphans", "-t", "20", check=False)
            still_running = no_sandbox_left(workers)
    if not args.keep:
        if still_running:
            print(f"FAIL {still_running} sandbox container(s) of the stack's workers still ran 300 s after `down`", file=sys.stderr)
            return 1
        print("ok   no sandbox container left after `down`", flush=True)
    print(f"compose-check passed in {time.monotonic() - started:.0f} s (port {port}, project {PROJECT})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
