# The web and worker image: Debian 12's Python 3.11 and the pinned environment
# (requirements.txt), installed offline from wheels the host downloaded
# (scripts/build-app-image.sh), then the application code. No registry needed:
# the base is the debootstrap image that `make sandbox-image` imports.
ARG OS_IMAGE=mlprep-debian:bookworm
FROM ${OS_IMAGE}

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*

COPY var/docker/app-wheels /wheels
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-index --find-links /wheels --no-cache-dir -r /wheels/requirements.txt -r /wheels/extra.txt \
 && rm -rf /wheels

ENV PATH=/opt/venv/bin:/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=web.config.settings_production
WORKDIR /app
# requirements.txt with sandbox/: the docker backend names the sandbox image
# by a hash of both (sandbox/image.py), so the worker finds the image built
# from this same checkout.
COPY manage.py requirements.txt ./
COPY web web
COPY grader grader
COPY sandbox sandbox
COPY challenges challenges
# collectstatic needs none of the production checks (no Redis at build time,
# no real key): the base settings, with a throwaway key.
RUN DJANGO_SETTINGS_MODULE=web.config.settings SECRET_KEY=build-only python manage.py collectstatic --noinput \
 && /usr/sbin/useradd --system --home /app mlprep && mkdir -p /var/cache/mlprep && chown mlprep /var/cache/mlprep \
 && find / -xdev -type f -perm /6000 -exec chmod ug-s {} +
# No setuid or setgid program is left (su, mount, passwd...): with no-new-privileges they could not raise
# privileges anyway, and without them a container that lost that option still cannot (issue 28).
USER mlprep
EXPOSE 8000
