# Redis from Debian's package, on the debootstrap base (no registry to pull from).
ARG OS_IMAGE=mlprep-debian:bookworm
FROM ${OS_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
USER redis
EXPOSE 6379
# Append-only file in the volume: queued gradings survive a restart of the broker.
# The password comes from REDIS_PASSWORD at start, through a config file
# readable by redis only (not the command line, which `ps` shows); without
# one the server does not start.
COPY password-rules.sh /usr/local/lib/mlprep/password-rules.sh
COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint.sh
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
