#!/bin/sh
# Write .env for docker-compose from .env.example, with fresh random secrets.
# Never overwrites an existing .env: its SECRET_KEY signs live sessions and
# its POSTGRES_PASSWORD is the one the database volume was created with.
set -eu
cd "$(dirname "$0")/.."
if [ -e .env ]; then
    echo ".env exists; leaving it as it is (edit it by hand, see .env.example)." >&2
    exit 0
fi
secret() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }
umask 077  # the file holds passwords: readable by its owner only
sed -e "s/^SECRET_KEY=$/SECRET_KEY=$(secret 32)/" \
    -e "s/^POSTGRES_PASSWORD=$/POSTGRES_PASSWORD=$(secret 24)/" \
    -e "s/^REDIS_PASSWORD=$/REDIS_PASSWORD=$(secret 24)/" \
    .env.example > .env
echo "Wrote .env with new SECRET_KEY, POSTGRES_PASSWORD and REDIS_PASSWORD; review ALLOWED_HOSTS, HTTPS and WEB_PORT." >&2
