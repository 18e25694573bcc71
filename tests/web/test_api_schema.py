"""The OpenAPI schema against the API's real answers (issue 30): a field an answer holds that the schema lacks fails.

Every endpoint is called on a small world (a graded Submit with hints, a Run,
a mock interview's scorecard) and each JSON answer is walked against the
response schema its operation declares for that status: every key of an
object must be a property the schema names (``$ref`` and ``allOf`` resolved,
lists walked item by item), and every property the schema requires must be
there. The presenters build the answers and the serializers only describe
them, so this is what keeps the two from drifting.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge
from web.interviews.services import interview_create, interview_open
from web.submissions.models import Submission

from .conftest import SUM_WRONG
from .test_api import submit, token_for

Json = Any


def resolve(schema: Json, node: Json) -> Json:
    """``node`` with its ``$ref`` followed and ``allOf`` merged (properties and required lists)."""
    while isinstance(node, dict) and "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].split("/")[-1]]
    if isinstance(node, dict) and "allOf" in node:
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in node["allOf"]:
            part = resolve(schema, part)
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
        return merged
    return node


def problems(schema: Json, node: Json, value: Json, where: str) -> list[str]:
    node = resolve(schema, node)
    if not isinstance(node, dict):
        return []
    if isinstance(value, dict) and "properties" in node:
        found = [f"{where}: '{key}' is in the answer, not in the schema" for key in value if key not in node["properties"]]
        found += [f"{where}: '{key}' is required by the schema, not in the answer" for key in node.get("required", []) if key not in value]
        for key, item in value.items():
            if key in node["properties"]:
                found += problems(schema, node["properties"][key], item, f"{where}.{key}")
        return found
    if isinstance(value, list) and "items" in node:
        return [p for i, item in enumerate(value) for p in problems(schema, node["items"], item, f"{where}[{i}]")]
    return []


def response_schema(schema: Json, path: str, method: str, status: int) -> Json:
    operation = schema["paths"][path][method]
    return operation["responses"][str(status)]["content"]["application/json"]["schema"]


@pytest.fixture
def world(
    client: Client, user: User, coach: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> dict[str, Any]:
    api = Client(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    with django_capture_on_commit_callbacks(execute=True):
        submitted = submit(api, {"kind": "submit", "code": SUM_WRONG})
        ran = submit(api, {"kind": "run", "code": SUM_WRONG})
    interview = interview_open(interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=30), user)
    coach_api = Client(HTTP_AUTHORIZATION=f"Token {token_for(coach)}")
    return {"api": api, "coach_api": coach_api, "submit": submitted, "run": ran, "interview": interview}


def test_every_answer_of_the_api_is_described_by_its_schema(client: Client, world: dict[str, Any]) -> None:
    schema = client.get(reverse("api-schema"), {"format": "json"}).json()
    api, coach_api = world["api"], world["coach_api"]
    submit_id = world["submit"].json()["id"]
    hint = next(h for h in api.get(reverse("api-submission", args=[submit_id])).json()["hints"] if h["can_reveal"])
    queued = Submission.objects.create(
        user=Submission.objects.get(pk=submit_id).user, challenge=Submission.objects.get(pk=submit_id).challenge,
        version=Submission.objects.get(pk=submit_id).version, kind="submit", code="x = 1\n",
    )  # fmt: skip
    calls = [
        ("/api/v1/challenges/", "get", api.get(reverse("api-challenges"))),
        ("/api/v1/challenges/{slug}/", "get", api.get(reverse("api-challenge", args=["add-two"]))),
        ("/api/v1/challenges/{slug}/submissions/", "post", world["submit"]),
        ("/api/v1/challenges/{slug}/submissions/", "post", world["run"]),
        ("/api/v1/submissions/{id}/", "get", api.get(reverse("api-submission", args=[submit_id]))),
        ("/api/v1/submissions/{id}/", "get", api.get(reverse("api-submission", args=[world["run"].json()["id"]]))),
        ("/api/v1/submissions/", "get", api.get(reverse("api-submissions"))),
        ("/api/v1/progress/", "get", api.get(reverse("api-progress"))),
        ("/api/v1/submissions/{id}/hints/{hint_id}/reveal/", "post", api.post(reverse("api-hint-reveal", args=[submit_id, hint["id"]]))),
        ("/api/v1/submissions/{id}/cancel/", "post", api.post(reverse("api-cancel", args=[queued.pk]))),
        ("/api/v1/submissions/{id}/regrade/", "post", api.post(reverse("api-regrade", args=[submit_id]))),  # 409: not a platform failure
        ("/api/v1/interviews/{interview_id}/scorecard", "get", coach_api.get(reverse("api-interview-scorecard", args=[world["interview"].pk]))),
    ]
    found = []
    for path, method, answer in calls:
        assert answer.status_code < 500, (path, answer.status_code)
        body = answer.json()
        found += problems(schema, response_schema(schema, path, method, answer.status_code), body, f"{method.upper()} {path} {answer.status_code}")
    assert not found, "\n".join(found)


def test_the_walk_finds_a_field_the_schema_lacks() -> None:
    schema = {"components": {"schemas": {"S": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}}
    assert problems(schema, {"$ref": "#/components/schemas/S"}, {"a": 1}, "x") == []
    assert problems(schema, {"$ref": "#/components/schemas/S"}, {"a": 1, "b": 2}, "x") == ["x: 'b' is in the answer, not in the schema"]
    assert problems(schema, {"type": "array", "items": {"$ref": "#/components/schemas/S"}}, [{}], "x") == [
        "x[0]: 'a' is required by the schema, not in the answer"
    ]
