"""The API's progress and history (web/api/views.py ProgressView, HistoryView): the pages' data for the token's user."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.web.progress_world import make
from tests.web.test_api import token_for
from web.api.views import HISTORY_PAGE_SIZE
from web.challenges.models import Challenge
from web.submissions.models import Status, Verdict


def get(client: Client, user: User, url: str, **params: Any) -> Any:
    return client.get(url, params, HTTP_AUTHORIZATION=f"Token {token_for(user)}")


def test_progress_needs_credentials(client: Client, db: Any) -> None:
    for name in ("api-progress", "api-submissions"):
        response = client.get(reverse(name))
        assert response.status_code == 401 and "error" in response.json()


def test_progress_lists_tracks_challenges_states_and_scores(client: Client, catalogue: dict[str, Challenge], user: User, other_user: User) -> None:
    make(user, catalogue["add-two"], score=30.0)
    accepted = make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    run = make(user, catalogue["mul-two"], kind="run", verdict=Verdict.WRONG_ANSWER)
    make(other_user, catalogue["add-again"], verdict=Verdict.ACCEPTED, score=100.0)
    data = get(client, user, reverse("api-progress")).json()
    assert (data["solved"], data["attempted"], data["total"]) == (1, 1, 3)
    tracks = {t["slug"]: t for t in data["tracks"]}
    assert (tracks["basics"]["solved"], tracks["basics"]["total"]) == (1, 2)
    rows = {c["slug"]: c for t in data["tracks"] for c in t["challenges"]}
    assert rows["add-two"] | {"categories": None, "last_attempt": None} == {
        "slug": "add-two", "title": "Add two integers", "difficulty": "easy", "state": "solved", "best_score": 100.0,
        "submits": 2, "runs": 0, "categories": None, "last_attempt": None,
    }  # fmt: skip
    assert rows["add-two"]["last_attempt"]["id"] == accepted.pk
    assert rows["add-two"]["last_attempt"]["url"] == reverse("api-submission", args=[accepted.pk])
    assert rows["mul-two"]["state"] == "attempted" and rows["mul-two"]["last_attempt"]["id"] == run.pk
    assert rows["add-again"]["state"] == "not_started" and rows["add-again"]["last_attempt"] is None  # the other user's accept
    assert [(s["slug"], [p["score"] for p in s["points"]]) for s in data["scores"]] == [("add-two", [30.0, 100.0])]


def test_history_is_newest_first_with_filters(client: Client, catalogue: dict[str, Challenge], user: User, other_user: User) -> None:
    s1 = make(user, catalogue["add-two"], score=20.0)
    r1 = make(user, catalogue["add-two"], kind="run", verdict=Verdict.ACCEPTED, score=100.0)
    s2 = make(user, catalogue["mul-two"], verdict=Verdict.ACCEPTED, score=100.0)
    q1 = make(user, catalogue["add-again"], status=Status.QUEUED)
    make(other_user, catalogue["add-two"])

    def ids(**params: str) -> list[int]:
        response = get(client, user, reverse("api-submissions"), **params)
        assert response.status_code == 200
        return [row["id"] for row in response.json()["results"]]

    assert ids() == [q1.pk, s2.pk, r1.pk, s1.pk]
    assert ids(challenge="add-two") == [r1.pk, s1.pk]
    assert ids(kind="submit") == [q1.pk, s2.pk, s1.pk]
    assert ids(verdict="accepted") == [s2.pk, r1.pk]
    assert ids(challenge="add-two", kind="run", verdict="accepted") == [r1.pk]
    assert ids(track="more") == [s2.pk]
    row = get(client, user, reverse("api-submissions"), challenge="mul-two").json()["results"][0]
    assert row == {
        "id": s2.pk, "challenge": "mul-two", "title": "Multiply two", "track": "more", "kind": "submit", "status": "done",
        "verdict": "accepted", "verdict_label": "Accepted", "score": 100.0, "created_at": s2.created_at.isoformat(),
        "finished_at": None, "url": reverse("api-submission", args=[s2.pk]),
    }  # fmt: skip
    queued = get(client, user, reverse("api-submissions"), challenge="add-again").json()["results"][0]
    assert (queued["status"], queued["verdict"], queued["score"]) == ("queued", None, None)


def test_history_refuses_an_unknown_kind_or_verdict(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    response = get(client, user, reverse("api-submissions"), kind="walk")
    assert response.status_code == 400
    assert response.json() == {"error": "kind must be one of: run, submit."}
    assert get(client, user, reverse("api-submissions"), verdict="great").status_code == 400


def test_history_pages_keep_the_filters(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    runs = [make(user, catalogue["add-two"], kind="run").pk for _ in range(HISTORY_PAGE_SIZE + 2)]
    make(user, catalogue["add-two"])
    first = get(client, user, reverse("api-submissions"), kind="run").json()
    assert (first["count"], first["page"], first["pages"], first["previous"]) == (HISTORY_PAGE_SIZE + 2, 1, 2, None)
    assert first["next"] == f"{reverse('api-submissions')}?kind=run&page=2"
    second = client.get(first["next"], HTTP_AUTHORIZATION=f"Token {token_for(user)}").json()
    assert [r["id"] for r in second["results"]] == runs[:2][::-1]
    assert second["next"] is None and second["previous"] == f"{reverse('api-submissions')}?kind=run&page=1"


def test_the_schema_documents_both_endpoints_and_the_filters(client: Client, db: Any) -> None:
    schema = client.get(reverse("api-schema"), {"format": "json"}).json()
    history = schema["paths"]["/api/v1/submissions/"]["get"]
    params = {p["name"]: p for p in history["parameters"]}
    assert set(params) == {"challenge", "track", "kind", "verdict", "page"}
    assert params["kind"]["schema"]["enum"] == ["run", "submit"] and "accepted" in params["verdict"]["schema"]["enum"]
    assert set(history["responses"]) == {"200", "400"}
    progress = schema["paths"]["/api/v1/progress/"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert progress == {"$ref": "#/components/schemas/Progress"}
    states = schema["components"]["schemas"]["ChallengeProgress"]["properties"]["state"]
    assert "solved" in str(states) and "not_started" in str(states)
