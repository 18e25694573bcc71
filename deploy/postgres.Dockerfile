# PostgreSQL 15 from Debian's package, on the debootstrap base. The entrypoint
# creates the cluster, the role and the database on first start.
ARG OS_IMAGE=mlprep-debian:bookworm
FROM ${OS_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /var/lib/postgresql/data && chown -R postgres:postgres /var/lib/postgresql
COPY password-rules.sh /usr/local/lib/mlprep/password-rules.sh
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:/usr/bin:/bin PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
