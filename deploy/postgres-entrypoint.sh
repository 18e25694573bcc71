#!/bin/sh
# First start: make the cluster, then the role and database named by
# POSTGRES_USER / POSTGRES_DB (default mlprep) with POSTGRES_PASSWORD.
set -eu
. /usr/local/lib/mlprep/password-rules.sh
user="${POSTGRES_USER:-mlprep}"
db="${POSTGRES_DB:-mlprep}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  refuse_weak_password POSTGRES_PASSWORD  # the role is created with it, once
  # UTF-8 explicitly: the minimal image has no locale, so initdb would pick
  # SQL_ASCII, which refuses the UTF-8 text Django stores.
  initdb --auth-host=scram-sha-256 --auth-local=peer --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -w start >/dev/null
  psql -v ON_ERROR_STOP=1 -d postgres -c "CREATE ROLE \"$user\" LOGIN PASSWORD '$POSTGRES_PASSWORD'" \
       -c "CREATE DATABASE \"$db\" OWNER \"$user\"" >/dev/null
  pg_ctl -D "$PGDATA" -w stop >/dev/null
fi
exec postgres -D "$PGDATA"
