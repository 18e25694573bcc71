"""What every sandbox is given, whichever backend starts it: the runner, its user, its environment.

Place in the flow: the backends (``bwrap.py``, ``docker.py``, ``local.py``)
build their sandboxes from these, and ``warm.py`` runs the runner's warm-up
from :data:`RUNNER_DIR`. Keeping them here, not in one backend, is what lets
a job behave the same in bwrap, in a container and on a laptop.
"""

from __future__ import annotations

import os
from pathlib import Path

# The in-sandbox runner's folder: bound at /runner by bwrap, copied into the
# docker image, run in place by the local backend.
RUNNER_DIR = Path(__file__).resolve().parent / "runner"

# The unprivileged user the runner runs as (nobody), in bwrap and in docker.
SANDBOX_UID = 65534

# Sandbox environment: the same for every run, nothing from the worker.
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONUNBUFFERED": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_ENABLE_ONEDNN_OPTS": "0",
    "TF_NUM_INTEROP_THREADS": "1",
    "TF_NUM_INTRAOP_THREADS": "1",
    "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor",
    "MPLBACKEND": "Agg",
}

# Passed through from the worker because they fix numerical library
# behaviour on some CPUs, not because the candidate needs them.
PASSTHROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def sandbox_env(**overrides: str) -> dict[str, str]:
    """:data:`BASE_ENV`, the worker's :data:`PASSTHROUGH_ENV` variables that are set, then ``overrides``."""
    env = dict(BASE_ENV)
    env.update({key: os.environ[key] for key in PASSTHROUGH_ENV if key in os.environ})
    env.update(overrides)
    return env
