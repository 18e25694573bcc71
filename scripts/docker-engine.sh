#!/usr/bin/env bash
# Make sure a Docker engine answers: install Debian's docker.io if it is missing
# and start dockerd when nothing is listening on its socket (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-debian-packages.sh docker.io docker-compose debootstrap
if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "error: no Docker engine answers and starting dockerd needs root" >&2
  exit 1
fi
mkdir -p var/log
echo "Starting dockerd (log: var/log/dockerd.log)"
nohup dockerd >var/log/dockerd.log 2>&1 &
for _ in $(seq 60); do
  docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "error: dockerd did not start; see var/log/dockerd.log" >&2
tail -20 var/log/dockerd.log >&2
exit 1
