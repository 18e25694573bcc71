"""GET /api/v1/interviews/<id>/scorecard (web/api/views.py InterviewScorecardView): the scorecard as JSON.

Recommendation, notes and the rubric with each row's cited moments, for the
interview's coach or staff; the candidate, other coaches and a missing id
get the same 404, with a token or a session.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from web.interviews.evidence import citation_add
from web.interviews.services import interview_assess

from .test_api import token_for
from .test_interviews_evidence import Story, other_interview, story  # noqa: F401 - pytest fixtures


def get(client: Client, user: User | None, interview_id: int) -> Any:
    headers = {"HTTP_AUTHORIZATION": f"Token {token_for(user)}"} if user is not None else {}
    return client.get(reverse("api-interview-scorecard", args=[interview_id]), **headers)


@pytest.fixture
def assessed(story: Story, coach: User) -> Story:  # noqa: F811 - the fixture above
    rubric = {"debugging": {"score": 4, "comment": "bisected"}}
    interview_assess(story.interview, coach, notes="Methodical.", rubric=rubric, recommendation="strong_yes")
    citation_add(story.interview, coach, criterion="debugging", key=f"submit:{story.failed.pk}", probe="positives", comment="read the diff")
    citation_add(story.interview, coach, criterion="debugging", key=f"hint:{story.hint.pk}")
    return story


def test_the_coach_gets_recommendation_notes_and_rubric_with_citations(assessed: Story, client: Client, coach: User) -> None:
    response = get(client, coach, assessed.interview.pk)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    data = response.json()
    assert (data["recommendation"], data["recommendation_label"], data["notes"]) == ("strong_yes", "Strong yes", "Methodical.")
    assert data["id"] == assessed.interview.pk and data["scorecard_url"] == reverse("interview-scorecard", args=[assessed.interview.pk])
    debugging = next(r for r in data["rubric"] if r["criterion"] == "debugging")
    assert (debugging["score"], debugging["comment"]) == (4, "bisected")
    first, second = debugging["citations"]
    assert first["text"] == "correctness: failed positives at 12:41" and first["comment"] == "read the diff"
    assert first["at"] == assessed.failed.created_at.isoformat() and first["clock"] == "12:41"
    assert first["links"]["submission"] == f"/interviews/{assessed.interview.pk}/submissions/{assessed.failed.pk}/"
    assert second["key"] == f"hint:{assessed.hint.pk}" and second["probe"] is None
    assert [line["text"] for line in debugging["evidence"]] == [first["text"], second["text"]]
    assert set(first) == {"id", "criterion", "key", "kind", "at", "offset_seconds", "clock", "label", "challenge", "submission_id",
                          "submission_label", "probe", "text", "comment", "links"}  # fmt: skip


def test_staff_get_it_too(assessed: Story, client: Client, staff: User) -> None:
    assert get(client, staff, assessed.interview.pk).json()["recommendation"] == "strong_yes"


def test_the_candidate_other_coaches_and_a_missing_id_get_the_same_404(
    assessed: Story, client: Client, user: User, other_coach: User, coach: User
) -> None:
    for who, interview_id in ((user, assessed.interview.pk), (other_coach, assessed.interview.pk), (coach, 999_999)):
        response = get(client, who, interview_id)
        assert response.status_code == 404 and response.json() == {"error": "No such interview."}
        assert "Methodical" not in response.content.decode()
    # By session as well as by token.
    client.force_login(user)
    assert client.get(reverse("api-interview-scorecard", args=[assessed.interview.pk])).status_code == 404


def test_without_credentials_it_is_401(assessed: Story, client: Client) -> None:
    assert get(client, None, assessed.interview.pk).status_code == 401


def test_it_is_in_the_openapi_schema(client: Client, db: None) -> None:
    schema = client.get(reverse("api-schema"), {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/interviews/{interview_id}/scorecard"]["get"]
    assert set(operation["responses"]) == {"200", "404"}
    body = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    fields = schema["components"]["schemas"][body]["properties"]
    assert {"recommendation", "notes", "rubric"} <= set(fields)
    rubric = schema["components"]["schemas"]["ScorecardRubricRow"]["properties"]
    assert {"score", "comment", "citations", "evidence"} <= set(rubric)


def test_the_command_line_client_prints_the_scorecard_with_its_evidence(assessed: Story, client: Client, coach: User) -> None:
    from io import StringIO

    from web.cli import print_scorecard

    out = StringIO()
    print_scorecard(get(client, coach, assessed.interview.pk).json(), out)
    text = out.getvalue()
    assert "Recommendation: Strong yes" in text
    assert '  Debugging: 4  bisected\n    - correctness: failed positives at 12:41\n      "read the diff"\n' in text
    assert f"    - Hint nudge revealed (tier 1, nudge) after #{assessed.failed.pk} at 13:05\n" in text
    assert "  Correctness: -\n" in text and text.endswith("Notes:\n  Methodical.\n")


def test_the_command_line_client_asks_the_scorecard_url_and_prints_json_on_request(assessed: Story, client: Client, coach: User) -> None:
    import json
    from io import StringIO

    from web import cli

    asked: list[tuple[str, str]] = []

    class Site:
        def request(self, method: str, path: str) -> dict[str, Any]:
            asked.append((method, path))
            return dict(get(client, coach, assessed.interview.pk).json())

    out = StringIO()
    assert cli.scorecard(Site(), assessed.interview.pk, out, as_json=True) == 0  # type: ignore[arg-type]
    assert asked == [("GET", f"/api/v1/interviews/{assessed.interview.pk}/scorecard")]
    assert json.loads(out.getvalue())["recommendation"] == "strong_yes"
    args = cli._parser().parse_args(["scorecard", str(assessed.interview.pk), "--json", "--token", "t"])
    assert (args.command, args.interview, args.json) == ("scorecard", assessed.interview.pk, True)
