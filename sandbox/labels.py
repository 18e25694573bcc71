"""The labels that mark a container as a sandbox and name the worker and profile it belongs to.

Shared by the docker backend (``docker.py``, which sets them) and the
launcher (``launcher_policy.py``, which lets requests through only for
containers carrying :data:`LABEL`); kept apart so the launcher imports
nothing of the backend.
"""

LABEL = "mlprep.sandbox"
LABEL_WORKER = "mlprep.worker"
LABEL_PROFILE = "mlprep.profile"
