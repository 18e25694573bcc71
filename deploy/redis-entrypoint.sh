#!/bin/sh
# Start Redis with a password: requirepass from REDIS_PASSWORD, written to a
# config file only the redis user can read, so it never shows in `ps`.
set -eu
. /usr/local/lib/mlprep/password-rules.sh
refuse_weak_password REDIS_PASSWORD
umask 077
conf=/tmp/redis.conf
printf 'requirepass %s\n' "$REDIS_PASSWORD" > "$conf"
exec redis-server "$conf" --bind 0.0.0.0 --protected-mode yes --dir /data --appendonly yes --appendfsync everysec
