"""What the sandbox launcher lets through to the Docker engine: the policy, as pure functions.

Place in the flow: the worker's docker backend (``sandbox/docker.py``) speaks
the Docker Engine API, but in production it does not hold the engine's
socket (whoever holds that socket owns the host). It talks to the launcher
(``sandbox/launcher.py``), which holds the socket and forwards a request only
when :func:`decide` allows it. The launcher enforces the sandbox's hardening
itself, so a compromised worker can still only do what the worker does:
create a container of the sandbox image with the hardened settings of
``DockerSandbox``, then attach to, start, inspect, wait for, resize the
memory of, kill and remove containers carrying the sandbox label, list them
and read their kill events.

A create request is checked field by field against :class:`Policy`: every
field the worker sends must be one it is known to send, with the value the
hardening requires (no network, read-only root, uid 65534, every capability
dropped, ``no-new-privileges``, an init process, no logging) or a size
within the caps (memory, pids, CPUs, tmpfs). Anything else, including any
field this module does not know (``Privileged``, ``Binds``, ``Devices``,
``PidMode``...), refuses the request. Requests naming a container are
allowed only for containers with the sandbox label; the launcher looks the
label up in the engine (:data:`NEEDS_LABEL_CHECK`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode

from sandbox.environment import BASE_ENV, PASSTHROUGH_ENV, SANDBOX_UID
from sandbox.labels import LABEL, LABEL_PROFILE, LABEL_WORKER
from sandbox.runner.profiles import PROFILES
from sandbox.seccomp import docker_security_options

MIB = 1024 * 1024
_VERSION_PREFIX = re.compile(r"^/v1\.\d+(?=/)")
_CONTAINER_ID = r"(?P<id>[A-Za-z0-9][A-Za-z0-9_.-]{0,127})"


@dataclass(frozen=True)
class Policy:
    """The launcher's configuration: the one image, and the caps on what a sandbox may be given."""

    image: str
    runtimes: frozenset[str] = frozenset()  # OCI runtimes the worker may ask for (e.g. runsc); empty: the engine's default only
    max_memory_mb: int = 16384  # the largest memory_mb a package may set (grader/package_load.py)
    max_pids: int = 4096
    max_cpus: float = 16.0
    max_tmpfs_mb: int = 8192
    max_nofile: int = 1024
    env_keys: frozenset[str] = field(default_factory=lambda: frozenset(BASE_ENV) | frozenset(PASSTHROUGH_ENV))


@dataclass(frozen=True)
class Decision:
    """Whether a request may go to the engine; ``container`` names the one whose label must be checked first.

    ``body`` and ``target`` are what the launcher forwards in place of what it
    received: the checked JSON and request target written out again, so the
    engine decodes exactly what was checked.
    """

    allowed: bool
    reason: str = ""
    container: str | None = None
    upgrade: bool = False  # an attach: after the engine's answer, bytes flow both ways
    body: bytes = b""
    target: str = ""  # the request target as checked, written out again

    @staticmethod
    def refuse(reason: str) -> Decision:
        return Decision(False, reason)


class Refused(ValueError):
    """A create body that breaks the policy; the message names the field."""


# --- Requests --------------------------------------------------------------------------------------------

_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("GET", re.compile(r"^/_ping$"), "ping"),
    ("HEAD", re.compile(r"^/_ping$"), "ping"),
    ("GET", re.compile(r"^/version$"), "version"),
    ("GET", re.compile(r"^/images/(?P<image>.+)/json$"), "image"),
    ("POST", re.compile(r"^/containers/create$"), "create"),
    ("GET", re.compile(r"^/containers/json$"), "list"),
    ("GET", re.compile(r"^/events$"), "events"),
    ("GET", re.compile(rf"^/containers/{_CONTAINER_ID}/json$"), "inspect"),
    ("POST", re.compile(rf"^/containers/{_CONTAINER_ID}/attach$"), "attach"),
    ("POST", re.compile(rf"^/containers/{_CONTAINER_ID}/start$"), "start"),
    ("POST", re.compile(rf"^/containers/{_CONTAINER_ID}/kill$"), "kill"),
    ("POST", re.compile(rf"^/containers/{_CONTAINER_ID}/wait$"), "wait"),
    ("POST", re.compile(rf"^/containers/{_CONTAINER_ID}/update$"), "update"),
    ("DELETE", re.compile(rf"^/containers/{_CONTAINER_ID}$"), "remove"),
]

# Query parameters each operation may carry (docker-py's, nothing that widens what it does).
_QUERY: dict[str, frozenset[str]] = {
    "ping": frozenset(),
    "version": frozenset(),
    "image": frozenset(),
    "create": frozenset(),  # no "name": the engine names it, nobody can collide with a host container
    "list": frozenset({"all", "filters", "limit", "size", "trunc_cmd"}),
    "events": frozenset({"since", "until", "filters"}),
    "inspect": frozenset(),
    "attach": frozenset({"stdin", "stdout", "stderr", "stream", "logs", "detachKeys"}),
    "start": frozenset(),
    "kill": frozenset({"signal"}),
    "wait": frozenset({"condition"}),
    "update": frozenset(),
    "remove": frozenset({"v", "link", "force"}),
}
NEEDS_LABEL_CHECK = frozenset({"inspect", "attach", "start", "kill", "wait", "update", "remove"})


def split_target(target: str) -> tuple[str, dict[str, list[str]]]:
    """The request target's path without the API version prefix, and its query."""
    path, _, query = target.partition("?")
    return _VERSION_PREFIX.sub("", unquote(path)), parse_qs(query, keep_blank_values=True)


def checked_target(target: str) -> str:
    """The target written out again from what :func:`split_target` read: the version prefix, the path, the query.

    The launcher forwards this, never the raw target, so the engine's URL parser
    reads the path and parameters the policy read (no ``;`` separators, stray
    escapes or fragments that the two parsers could split differently).
    """
    raw_path = target.partition("?")[0]
    prefix = _VERSION_PREFIX.match(unquote(raw_path))
    path, query = split_target(target)
    rebuilt = (prefix.group(0) if prefix else "") + quote(path, safe="/:@-._~")
    return rebuilt + ("?" + urlencode(query, doseq=True) if query else "")


def decide(method: str, target: str, body: bytes, policy: Policy) -> Decision:
    """May this request go to the engine? (The label of a named container is checked by the caller.)"""
    path, query = split_target(target)
    for route_method, pattern, operation in _ROUTES:
        match = pattern.match(path)
        if route_method != method or match is None:
            continue
        extra = set(query) - _QUERY[operation]
        if extra:
            return Decision.refuse(f"{operation}: query parameter(s) not allowed: {', '.join(sorted(extra))}")
        if body and operation not in {"create", "update"}:
            return Decision.refuse(f"{operation}: a request body is not allowed")
        groups = match.groupdict()
        checked = b""
        try:
            if operation == "image" and groups["image"] != policy.image:
                return Decision.refuse(f"image: only the sandbox image {policy.image} may be looked up, not {groups['image']}")
            if operation in {"create", "update"}:
                parsed = strict_json(body)
                (check_create if operation == "create" else check_update)(parsed, policy)
                checked = canonical_json(parsed)
            if operation == "list":
                _require_filter(query, "label", LABEL, "list")
            if operation == "events":
                filters = _filters(query)
                containers = filters.get("container", [])
                if len(containers) != 1:
                    raise Refused("events: name exactly one container (filters={'container': [id]})")
                return Decision(True, container=containers[0], target=checked_target(target))
        except Refused as exc:
            return Decision.refuse(str(exc))
        return Decision(True, container=groups.get("id"), upgrade=operation == "attach", body=checked, target=checked_target(target))
    return Decision.refuse(f"{method} {path} is not an operation the sandbox needs")


MAX_JSON_DEPTH = 8  # a create body nests 4 deep (HostConfig.LogConfig.Config, Ulimits[i])


def strict_json(body: bytes) -> Any:
    """``body`` parsed as the engine would read it, refused wherever the two readers could disagree.

    Python's ``json`` keeps the last of two equal keys; the engine's Go decoder
    fills a struct field from every key that matches it, and matches keys
    case-insensitively (``hostconfig``, ``HOSTCONFIG``, even with a Kelvin
    sign or a long s in place of a k or an s). A body with ``HostConfig`` twice was checked on its last
    copy and run with the first one merged in: a privileged container with
    the host's root bound. So a key that equals another of its object once
    case-folded is refused at every depth, as are NaN and infinities (Go
    refuses them, Python reads them), nesting deeper than any sandbox needs,
    and anything but UTF-8.
    """

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, str] = {}
        for key, _ in pairs:
            folded = key.casefold()
            if folded in seen:
                raise Refused(f"the request body names {json.dumps(seen[folded])} twice (as {json.dumps(key)}): every key once")
            seen[folded] = key
        return dict(pairs)

    def constant(name: str) -> Any:
        raise Refused(f"the request body holds {name}, which is not JSON")

    try:
        text = body.decode("utf-8") if body else "null"
        parsed = json.loads(text, object_pairs_hook=unique, parse_constant=constant)
    except (UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, Refused):
            raise
        raise Refused("the request body is not JSON") from None
    except RecursionError:
        raise Refused(f"the request body nests deeper than {MAX_JSON_DEPTH} levels") from None
    if _depth(parsed) > MAX_JSON_DEPTH:
        raise Refused(f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
    return parsed


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def canonical_json(value: Any) -> bytes:
    """The checked body written out again (ASCII only, one form per value): what the launcher forwards, never the raw bytes."""
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def _filters(query: Mapping[str, list[str]]) -> dict[str, list[str]]:
    raw = query.get("filters", ["{}"])
    parsed = strict_json(raw[0].encode("utf-8")) if len(raw) == 1 else None
    if not isinstance(parsed, dict):
        raise Refused("filters must be one JSON object")
    result: dict[str, list[str]] = {}
    for key, value in parsed.items():
        # The engine takes {"label": ["a"]} and the older {"label": {"a": true}}.
        values = list(value) if isinstance(value, (list, dict)) else [value]
        result[str(key)] = [str(v) for v in values]
    return result


def _require_filter(query: Mapping[str, list[str]], key: str, value: str, operation: str) -> None:
    if value not in _filters(query).get(key, []):
        raise Refused(f"{operation}: must filter on {key}={value}")


# --- Bodies ----------------------------------------------------------------------------------------------

# Top-level create fields docker-py sends, and the value each must have (None: absent or null is required).
_CREATE_FIXED: dict[str, Any] = {
    "Hostname": None, "Domainname": None, "ExposedPorts": None, "Volumes": None, "Entrypoint": None,
    "WorkingDir": None, "NetworkingConfig": None, "MacAddress": None, "StopSignal": None, "Healthcheck": None,
    "StopTimeout": None, "Runtime": None,
    "User": f"{SANDBOX_UID}:{SANDBOX_UID}", "Tty": False, "OpenStdin": True, "StdinOnce": True,
    "AttachStdin": True, "AttachStdout": True, "AttachStderr": True,
}  # fmt: skip
_CREATE_CHECKED = {"Image", "Cmd", "Env", "Labels", "HostConfig", "NetworkDisabled"}

_HOST_FIXED: dict[str, Any] = {
    "NetworkMode": "none",
    "ReadonlyRootfs": True,
    "CapDrop": ["ALL"],
    "SecurityOpt": docker_security_options(),  # the sandboxes' seccomp allowlist, byte for byte
    "Init": True,
    "LogConfig": {"Type": "none", "Config": {}},
}
_HOST_CHECKED = {"Memory", "MemorySwap", "PidsLimit", "NanoCpus", "Tmpfs", "Ulimits", "Runtime"}
_TMPFS_REQUIRED = {"rw", "nosuid", "nodev"}
_TMPFS_EXEC_ALLOWED = {"/tmp"}  # compiled extensions are dlopen'ed from /tmp (DockerSandbox)


def check_create(body: Any, policy: Policy) -> None:
    """Raise Refused unless ``body`` is exactly a hardened sandbox container of the sandbox image."""
    if not isinstance(body, dict):
        raise Refused("create: the body must be a JSON object")
    unknown = set(body) - set(_CREATE_FIXED) - _CREATE_CHECKED
    if unknown:
        raise Refused(f"create: field(s) not allowed: {', '.join(sorted(unknown))}")
    for key, required in _CREATE_FIXED.items():
        if body.get(key) != required:
            raise Refused(f"create: {key} must be {json.dumps(required)}, not {json.dumps(body.get(key))}")
    if body.get("Image") != policy.image:
        raise Refused(f"create: only the sandbox image {policy.image} may be run, not {body.get('Image')!r}")
    command = body.get("Cmd")
    if not (isinstance(command, list) and len(command) == 1 and command[0] in PROFILES):
        raise Refused(f"create: Cmd must be one runtime profile ({', '.join(sorted(PROFILES))}), not {command!r}")
    if body.get("NetworkDisabled") not in (None, False, True):
        raise Refused("create: NetworkDisabled must be a boolean")
    _check_env(body.get("Env"), policy)
    _check_labels(body.get("Labels"), str(command[0]))
    _check_host(body.get("HostConfig"), policy)


def _check_env(env: Any, policy: Policy) -> None:
    if env is None:
        return
    if not isinstance(env, list) or not all(isinstance(item, str) and "=" in item for item in env):
        raise Refused("create: Env must be a list of NAME=value")
    names = {item.split("=", 1)[0] for item in env}
    extra = names - policy.env_keys
    if extra:
        raise Refused(f"create: environment variable(s) not allowed: {', '.join(sorted(extra))}")


def _check_labels(labels: Any, profile: str) -> None:
    if not isinstance(labels, dict) or labels.get(LABEL) != "1":
        raise Refused(f"create: the container must carry the label {LABEL}=1")
    extra = set(labels) - {LABEL, LABEL_WORKER, LABEL_PROFILE}
    if extra:
        raise Refused(f"create: label(s) not allowed: {', '.join(sorted(extra))}")
    if labels.get(LABEL_PROFILE, profile) != profile:
        raise Refused(f"create: the {LABEL_PROFILE} label must name the profile run ({profile})")


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _check_host(host: Any, policy: Policy) -> None:
    if not isinstance(host, dict):
        raise Refused("create: HostConfig is required")
    unknown = set(host) - set(_HOST_FIXED) - _HOST_CHECKED
    if unknown:
        raise Refused(f"create: HostConfig field(s) not allowed: {', '.join(sorted(unknown))}")
    for key, required in _HOST_FIXED.items():
        if host.get(key) != required:
            if key == "SecurityOpt":  # the profile is 4 kB of JSON: named, not quoted
                raise Refused("create: HostConfig.SecurityOpt must be no-new-privileges and the sandboxes' seccomp allowlist (sandbox/seccomp.py)")
            raise Refused(f"create: HostConfig.{key} must be {json.dumps(required)}, not {json.dumps(host.get(key))}")
    _check_memory(host, policy, "create: HostConfig")
    pids = _positive_int(host.get("PidsLimit"))
    if pids is None or pids > policy.max_pids:
        raise Refused(f"create: HostConfig.PidsLimit must be 1..{policy.max_pids}, not {host.get('PidsLimit')!r}")
    cpus = _positive_int(host.get("NanoCpus"))
    if cpus is None or cpus > policy.max_cpus * 1e9:
        raise Refused(f"create: HostConfig.NanoCpus must be 1..{int(policy.max_cpus * 1e9)}, not {host.get('NanoCpus')!r}")
    runtime = host.get("Runtime")
    if runtime is not None and runtime not in policy.runtimes:
        allowed = ", ".join(sorted(policy.runtimes)) or "none: the engine's default"
        raise Refused(f"create: HostConfig.Runtime {runtime!r} is not allowed ({allowed})")
    _check_tmpfs(host.get("Tmpfs"), policy)
    _check_ulimits(host.get("Ulimits"), policy)


def _check_memory(host: Mapping[str, Any], policy: Policy, where: str) -> None:
    memory = _positive_int(host.get("Memory"))
    if memory is None or memory > policy.max_memory_mb * MIB:
        raise Refused(f"{where}.Memory must be 1..{policy.max_memory_mb * MIB} bytes, not {host.get('Memory')!r}")
    if host.get("MemorySwap") != memory:
        raise Refused(f"{where}.MemorySwap must equal Memory (no swap), not {host.get('MemorySwap')!r}")


def _check_tmpfs(tmpfs: Any, policy: Policy) -> None:
    if not isinstance(tmpfs, dict) or not tmpfs:
        raise Refused("create: HostConfig.Tmpfs must mount /tmp")
    for mount, options in tmpfs.items():
        if mount not in {"/tmp", "/dev/shm"}:
            raise Refused(f"create: tmpfs at {mount!r} is not allowed (only /tmp and /dev/shm)")
        parts = str(options).split(",")
        flags = {p for p in parts if "=" not in p}
        if not _TMPFS_REQUIRED <= flags:
            raise Refused(f"create: tmpfs {mount} must be mounted {','.join(sorted(_TMPFS_REQUIRED))}")
        if flags - _TMPFS_REQUIRED - {"exec", "noexec"} or ("exec" in flags and mount not in _TMPFS_EXEC_ALLOWED):
            raise Refused(f"create: tmpfs {mount} options not allowed: {options}")
        settings = dict(p.split("=", 1) for p in parts if "=" in p)
        if set(settings) - {"size", "mode"}:
            raise Refused(f"create: tmpfs {mount} options not allowed: {options}")
        size = settings.get("size", "")
        if not (size.endswith("m") and size[:-1].isdigit() and 0 < int(size[:-1]) <= policy.max_tmpfs_mb):
            raise Refused(f"create: tmpfs {mount} needs a size of 1..{policy.max_tmpfs_mb}m, not {size!r}")


def _check_ulimits(ulimits: Any, policy: Policy) -> None:
    caps = {"core": 0, "nofile": policy.max_nofile}
    for entry in ulimits or []:
        if not isinstance(entry, dict) or entry.get("Name") not in caps:
            raise Refused(f"create: ulimit {entry!r} is not allowed (only core and nofile)")
        cap = caps[entry["Name"]]
        for bound in ("Soft", "Hard"):
            value = entry.get(bound)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= cap:
                raise Refused(f"create: ulimit {entry['Name']} must be at most {cap}")


def check_update(body: Any, policy: Policy) -> None:
    """A running sandbox's new memory limit (DockerSandbox.apply_limits), or its CPU and process limits (DockerSandbox.widen), and nothing else."""
    if isinstance(body, dict) and set(body) == {"NanoCpus", "PidsLimit"}:
        cpus, pids = _positive_int(body.get("NanoCpus")), _positive_int(body.get("PidsLimit"))
        if cpus is None or cpus > policy.max_cpus * 1e9:
            raise Refused(f"update: NanoCpus must be 1..{int(policy.max_cpus * 1e9)}, not {body.get('NanoCpus')!r}")
        if pids is None or pids > policy.max_pids:
            raise Refused(f"update: PidsLimit must be 1..{policy.max_pids}, not {body.get('PidsLimit')!r}")
        return
    if not isinstance(body, dict) or set(body) != {"Memory", "MemorySwap"}:
        raise Refused("update: only Memory and MemorySwap, or NanoCpus and PidsLimit, may change")
    _check_memory(body, policy, "update")
