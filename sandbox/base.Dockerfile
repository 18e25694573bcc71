# The sandbox's heavy base: Debian 12's Python 3.11, a C++ toolchain (for the
# C++ operator challenge), and the project's pinned Python environment
# (sandbox/requirements.in, pinned by requirements.txt) installed offline
# from wheels the host downloaded.
# Built by `python -m sandbox.image build` (make sandbox-image) with the
# wheels folder as context; rebuilt only when requirements.txt changes.
ARG OS_IMAGE=mlprep-debian:bookworm
FROM ${OS_IMAGE}

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-dev g++ ninja-build ca-certificates \
 && rm -rf /var/lib/apt/lists/*

COPY . /wheels
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-index --find-links /wheels --no-cache-dir \
      -r /wheels/requirements.in -c /wheels/constraints.txt \
 && rm -rf /wheels
