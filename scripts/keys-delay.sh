#!/usr/bin/env bash
# Measure the keystroke-to-interviewer delay of the mock interview's live view (bench/keys_delay.py) on a
# throwaway stack run the way `make up` runs the service: gunicorn with 3 uvicorn workers serving the ASGI
# app (pages and websockets), Redis as the channel layer and document store, SQLite; on free loopback
# ports, in a temporary folder. No Celery worker: nothing is graded. Stops what it started.
# Extra arguments go to bench/keys_delay.py (e.g. --keys 500 --gap 20).
source "$(dirname "$0")/throwaway-stack.sh" mlprep-keys-delay
export CHALLENGES_DIR="$PWD/tests/fixtures/packages"
password="$($PY -c 'import secrets; print(secrets.token_urlsafe(16))')"

stack_database
$PY manage.py collectstatic --noinput >/dev/null
read -r interview token < <($PY manage.py shell --no-imports -c "
from django.contrib.auth.models import User
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.interviews.services import interview_create
coach = User.objects.create_user('grace', password='$password'); coach_grant(coach)
User.objects.create_user('ada', password='$password')
i = interview_create(coach, candidate_username='ada', challenges=[Challenge.objects.get(slug='add-numbers')], duration_minutes=60)
print(i.pk, i.token)")

stack_web

$PY -m bench.keys_delay --url "http://127.0.0.1:$web_port" --coach grace --candidate ada --password "$password" \
  --interview "$interview" --token "$token" --json "$dir/keys-delay.json" "$@"
