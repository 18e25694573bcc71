"""The platform's compile cache: what probes of compile-heavy packages would otherwise rebuild on every Submit.

Place in the flow: a package whose probes compile fixed inputs (IREE's IR
dumps of a fixed program, the vmfb of a fixed dump, the lowering of a fixed
model) says ``warm = ["compile"]`` in its challenge.toml. When the sandbox
environment is built (``make sandbox-image``: the Docker image's warm step,
and ``sandbox/warm.py``'s host folder for bwrap), ``runner/warm.py`` runs the
package's reference on its probes with :data:`FILL_ENV` naming a writable
folder, and every :func:`cached` call there stores what it built. Every
sandbox then sees those entries read-only under ``/opt/warm/compile``: the
image's read-only root (docker), a read-only bind of the host folder (bwrap).
Probes import this module from their ``probes/common.py`` (it lives beside
probekit on the sandbox's path); the candidate's own compiles never go
through it, so new code is always compiled for real.

An entry is named by the SHA-256 of its kind, the compiler's version and
every input part, each length-prefixed, so an entry is only ever read for
exactly the inputs that built it, and a new IREE never reads an old one's.
Nothing in a sandbox writes here: :data:`FILL_ENV` is set only by the warm
build. A probe may also keep a per-run cache in its sandbox's work folder
(``run_dir``), shared by the probes of one run and gone with the sandbox;
its writes use a name unique to the process, so probes running side by side
never trip over each other's half-written file.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence

# Where every sandbox finds the entries the warm build made (both backends:
# sandbox/warm.py's SANDBOX_WARM_DIR, which the runner cannot import).
READ_DIR = "/opt/warm/compile"
# Set only by runner/warm.py while the sandbox environment is built: the
# folder where built entries go. Never in a sandbox's environment.
FILL_ENV = "MLPREP_COMPILE_CACHE_FILL"

# What this process's lookups did, for the warm build's log and for tests
# that check a probe was served from the cache.
counts = {"platform": 0, "run": 0, "built": 0}


@functools.cache
def tool_version() -> str:
    """IREE's compiler version and revision: every entry so far is one of its compiles."""
    try:
        from iree.compiler.version import REVISIONS, VERSION
    except ImportError:  # no IREE in this environment: entries of other tools still key consistently
        return "iree.compiler absent"
    return f"iree.compiler {VERSION} {sorted(REVISIONS.items())}"


def key(kind: str, parts: Sequence[str | bytes], version: str | None = None) -> str:
    """The entry name for ``kind`` built from ``parts`` by the compiler ``version`` (default: the installed one)."""
    h = hashlib.sha256()
    for part in (kind, tool_version() if version is None else version, *parts):
        data = part.encode() if isinstance(part, str) else bytes(part)
        # Length-prefixed: ("ab", "c") and ("a", "bc") are different inputs.
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def fill_dir() -> str | None:
    """The folder the warm build is filling, or None (always None in a sandbox)."""
    return os.environ.get(FILL_ENV) or None


def _read(folder: str, name: str) -> bytes | None:
    try:
        with open(os.path.join(folder, name), "rb") as fh:
            return fh.read()
    except OSError:  # absent (a miss), or no such folder (a sandbox environment without a warm cache)
        return None


def _write(folder: str, name: str, data: bytes) -> None:
    """Write ``folder/name`` whole or not at all: a private temporary file, then one rename.

    The temporary name is unique to this call (mkstemp), so two processes
    writing the same entry at once each rename a complete file of their own;
    the last rename wins, and both wrote the same bytes.
    """
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name[:16]}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # readable by the sandbox user when the warm build runs as another
        os.replace(tmp, os.path.join(folder, name))
    except BaseException:
        os.unlink(tmp)
        raise


def cached(kind: str, parts: Sequence[str | bytes], build: Callable[[], bytes], *, run_dir: str | None = None) -> bytes:
    """The bytes ``build()`` makes from ``parts``: read from the platform's cache if it has them, else built for real.

    ``kind`` names what is built and how (e.g. "iree-vmfb"); ``parts`` must
    hold every input the result depends on besides the compiler's version
    (the source text, the flags). ``run_dir``, if given, is a writable folder
    shared by this run's probes: checked after the platform's cache, and
    written after a build. A build that raises stores nothing.
    """
    name = key(kind, parts)
    fill = fill_dir()
    for folder, counter in ((READ_DIR, "platform"), (fill, "platform"), (run_dir, "run")):
        if folder is None:
            continue
        data = _read(folder, name)
        if data is not None:
            counts[counter] += 1
            return data
    data = build()
    counts["built"] += 1
    if fill is not None:
        _write(fill, name, data)  # the warm build: a failure here must fail loudly
    if run_dir is not None:
        try:
            _write(run_dir, name, data)
        except OSError:
            pass  # a full or missing work folder only costs the next probe a rebuild
    return data
