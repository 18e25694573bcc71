#!/usr/bin/env bash
# Build the compose images (app, redis, postgres) without a registry: the host's
# pip downloads the app's wheels (it knows where the CPU torch lies), and every
# image starts from the debootstrap base that `make sandbox-image` imports.
set -euo pipefail
cd "$(dirname "$0")/.."
make sandbox-image
wheels=var/docker/app-wheels
mkdir -p "$wheels"
.venv/bin/python -m pip download --quiet --disable-pip-version-check -r requirements.txt -d "$wheels"
# Debian 12's Python is 3.11.2: redis needs async-timeout below 3.11.3, which
# the host's newer 3.11 skipped. extra.txt names what only the image needs.
echo "async-timeout>=4.0.3" > "$wheels/extra.txt"
.venv/bin/python -m pip download --quiet --disable-pip-version-check -r "$wheels/extra.txt" -d "$wheels"
cp requirements.txt "$wheels/requirements.txt"
# The images are tagged MLPREP_TAG (default latest; .env may set it): a test stack builds its own tag.
# The secrets are interpolated into every service even for a build; none is baked into an image.
SECRET_KEY=build-only POSTGRES_PASSWORD=build-only REDIS_PASSWORD=build-only docker-compose build
