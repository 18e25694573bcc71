"""web/submissions/pages.py: /progress/, /submissions/ and /submissions/<id>/; and the marks on the catalogue and track pages."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.web.progress_world import clone_package, make
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Verdict
from web.submissions.pages import HISTORY_PAGE_SIZE

EXPECTED_SECRET = "EXPECTED-VALUE-SECRET-77aa"


def html_of(client: Client, url: str, **params: Any) -> str:
    response = client.get(url, params)
    assert response.status_code == 200
    return response.content.decode()


# --- login -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["progress", "submission-list"])
def test_the_pages_need_a_login(name: str, client: Client, db: Any) -> None:
    response = client.get(reverse(name))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_the_header_links_to_progress_and_submissions_for_signed_in_users_only(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    page = html_of(client, reverse("catalogue"))
    assert 'id="progress-link"' not in page and 'id="submissions-link"' not in page
    client.force_login(user)
    page = html_of(client, reverse("catalogue"))
    assert f'href="{reverse("progress")}" id="progress-link"' in page
    assert f'href="{reverse("submission-list")}" id="submissions-link"' in page


# --- the progress page ---------------------------------------------------------------------------------------


def test_progress_shows_every_track_and_challenge_with_its_state(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], score=40.0)
    accepted = make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    make(user, catalogue["mul-two"], kind="run", verdict=Verdict.WRONG_ANSWER)
    client.force_login(user)
    html = html_of(client, reverse("progress"))
    assert re.search(r'<tr data-slug="add-two" data-state="solved">', html)
    assert re.search(r'<tr data-slug="add-again" data-state="not_started">', html)
    assert re.search(r'<tr data-slug="mul-two" data-state="attempted">', html)
    assert 'id="track-basics" data-solved="1" data-total="2"' in html
    assert 'id="track-more" data-solved="0" data-total="1"' in html
    assert 'data-solved="1" data-attempted="1" data-total="3"' in html
    assert reverse("submission-detail", args=[accepted.pk]) in html  # the last attempt links to its page
    series = json.loads(re.search(r'<script id="score-series" type="application/json">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert [(s["slug"], [p["score"] for p in s["points"]]) for s in series] == [("add-two", [40.0, 100.0])]
    assert "vendor/chartjs/chart.umd.min.js" in html and "js/progress-chart.js" in html


def test_progress_without_submits_says_so_and_loads_no_chart(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    client.force_login(user)
    html = html_of(client, reverse("progress"))
    assert 'id="chart-empty"' in html and "chartjs" not in html


def test_progress_shows_nothing_of_another_users_work(client: Client, catalogue: dict[str, Challenge], user: User, other_user: User) -> None:
    theirs = make(other_user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    client.force_login(user)
    html = html_of(client, reverse("progress"))
    assert 'data-state="solved"' not in html and 'data-state="attempted"' not in html
    assert reverse("submission-detail", args=[theirs.pk]) not in html


def test_the_progress_page_takes_as_many_queries_for_many_submissions_as_for_one(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    client.force_login(user)
    make(user, catalogue["add-two"], score=10.0)
    with CaptureQueriesContext(connection) as few:
        html_of(client, reverse("progress"))
    for slug in catalogue:
        for _ in range(4):
            make(user, catalogue[slug], verdict=Verdict.PARTIAL, score=50.0)
    with CaptureQueriesContext(connection) as many:
        html_of(client, reverse("progress"))
    assert len(many) == len(few)


# --- the history ---------------------------------------------------------------------------------------------------


def submission_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr data-submission="(\d+)"', html)]


def test_history_is_paginated_newest_first(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    made = [make(user, catalogue["add-two"], score=float(i)).pk for i in range(HISTORY_PAGE_SIZE + 3)]
    client.force_login(user)
    first = html_of(client, reverse("submission-list"))
    assert submission_ids(first) == made[::-1][:HISTORY_PAGE_SIZE]
    assert "page 1 of 2" in first and 'id="page-next"' in first
    second = html_of(client, reverse("submission-list"), page=2)
    assert submission_ids(second) == made[::-1][HISTORY_PAGE_SIZE:]
    assert 'id="page-prev"' in second and 'id="page-next"' not in second
    # A page past the end shows the last one rather than an error.
    assert submission_ids(html_of(client, reverse("submission-list"), page=99)) == made[::-1][HISTORY_PAGE_SIZE:]


def test_history_filters_are_get_parameters_and_the_page_links_keep_them(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    runs = [make(user, catalogue["add-two"], kind="run").pk for _ in range(HISTORY_PAGE_SIZE + 1)]
    submit = make(user, catalogue["mul-two"], verdict=Verdict.ACCEPTED, score=100.0).pk
    client.force_login(user)
    html = html_of(client, reverse("submission-list"), kind="run")
    assert submit not in submission_ids(html) and len(submission_ids(html)) == HISTORY_PAGE_SIZE
    assert 'href="?kind=run&amp;page=2"' in html
    assert '<option value="run" selected>' in html
    assert submission_ids(html_of(client, reverse("submission-list"), kind="run", page=2)) == [runs[0]]
    assert submission_ids(html_of(client, reverse("submission-list"), verdict="accepted", track="more")) == [submit]
    assert submission_ids(html_of(client, reverse("submission-list"), challenge="mul-two")) == [submit]
    filtered_out = html_of(client, reverse("submission-list"), challenge="add-again")
    assert submission_ids(filtered_out) == [] and "No submissions match these filters." in filtered_out
    # The form itself is plain GET with a submit button: it works without JavaScript.
    assert re.search(r'<form method="get" class="filters" id="history-filters"', html) and 'id="apply-filters"' in html


def test_history_never_lists_another_users_submissions(client: Client, catalogue: dict[str, Challenge], user: User, other_user: User) -> None:
    mine = make(user, catalogue["add-two"]).pk
    make(other_user, catalogue["add-two"])
    make(other_user, catalogue["mul-two"])
    client.force_login(user)
    html = html_of(client, reverse("submission-list"))
    assert submission_ids(html) == [mine]
    assert "Multiply two" not in html  # not even in the filter menu


# --- one submission ----------------------------------------------------------------------------------------------------


def test_a_submit_page_shows_the_candidates_view_not_the_stored_result(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    probe = {
        "name": "positives", "category": "correctness", "weight": 1.0, "passed": False, "status": "wrong_answer",
        "message": f"expected {EXPECTED_SECRET}", "description": "adds positives", "duration_ms": 3,
        "stdout": EXPECTED_SECRET, "observation": 1, "expected": EXPECTED_SECRET,
    }  # fmt: skip
    submission = make(user, catalogue["add-two"], probes=[probe], message="0 of 1 probes passed")
    client.force_login(user)
    html = html_of(client, reverse("submission-detail", args=[submission.pk]))
    assert EXPECTED_SECRET not in html
    payload = json.loads(re.search(r'<script id="submission-payload" type="application/json">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert payload["id"] == submission.pk and payload["probes"][0]["name"] == "positives"
    assert "expected" not in payload["probes"][0]
    assert "x = 1" in html  # the candidate's own code
    assert "js/result-panel.js" in html


def test_a_run_page_shows_the_public_probes_in_full(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    probe = {"name": "small", "category": "correctness", "weight": 1.0, "passed": False, "status": "wrong_answer",
             "message": "3 != 5", "observation": 3, "expected": 5, "stdout": "printed by me"}  # fmt: skip
    submission = make(user, catalogue["add-two"], kind="run", probes=[probe])
    client.force_login(user)
    html = html_of(client, reverse("submission-detail", args=[submission.pk]))
    payload = json.loads(re.search(r'<script id="submission-payload" type="application/json">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert (payload["probes"][0]["expected"], payload["probes"][0]["stdout"]) == (5, "printed by me")


def test_another_users_submission_page_is_a_404(client: Client, catalogue: dict[str, Challenge], user: User, other_user: User) -> None:
    theirs = make(other_user, catalogue["add-two"])
    client.force_login(user)
    assert client.get(reverse("submission-detail", args=[theirs.pk])).status_code == 404
    assert client.get(reverse("submission-detail", args=[theirs.pk + 100])).status_code == 404


# --- marks on the catalogue and track pages ---------------------------------------------------------------------------------


def card_states(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-slug="([\w-]+)" data-state="(\w+)"', html))


def test_the_catalogue_marks_solved_and_attempted_for_the_signed_in_user(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    make(user, catalogue["mul-two"], score=25.0)
    client.force_login(user)
    html = html_of(client, reverse("catalogue"))
    assert card_states(html) == {"add-two": "solved", "add-again": "not_started", "mul-two": "attempted"}
    assert "✓ Solved · best 100%" in html and "◐ Attempted · best 25%" in html


def test_anonymous_visitors_see_no_marks(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    make(user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)
    for url in (reverse("catalogue"), reverse("track-detail", args=["basics"])):
        html = html_of(client, url)
        assert card_states(html) == {} and "Solved" not in html and 'class="mark' not in html


def test_the_track_page_marks_each_step(client: Client, catalogue: dict[str, Challenge], user: User, other_user: User) -> None:
    make(user, catalogue["add-again"], kind="run")
    make(other_user, catalogue["add-two"], verdict=Verdict.ACCEPTED, score=100.0)  # not Alice's
    client.force_login(user)
    html = html_of(client, reverse("track-detail", args=["basics"]))
    assert card_states(html) == {"add-two": "not_started", "add-again": "attempted"}


def test_catalogue_marks_cost_one_query_whatever_the_number_of_challenges(
    client: Client, package_root: Path, settings: Any, user: User, django_assert_num_queries: Any
) -> None:
    for i in range(6):
        clone_package(package_root, f"extra-{i}", track="more" if i % 2 else "basics")
    settings.CHALLENGES_DIR = package_root
    assert challenge_sync_from_dir(package_root).ok
    client.force_login(user)
    with CaptureQueriesContext(connection) as before:
        html_of(client, reverse("catalogue"))
    for challenge in Challenge.objects.all():
        make(user, challenge, verdict=Verdict.ACCEPTED, score=100.0)
        make(user, challenge, kind="run")
    with django_assert_num_queries(len(before)) as queries:
        html = html_of(client, reverse("catalogue"))
    assert sum('"submissions_submission"' in q["sql"] for q in queries.captured_queries) == 1
    assert set(card_states(html).values()) == {"solved"} and len(card_states(html)) == 7


def test_the_challenge_page_links_to_its_filtered_history(client: Client, catalogue: dict[str, Challenge], user: User) -> None:
    client.force_login(user)
    html = html_of(client, reverse("challenge-detail", args=["mul-two"]))
    assert f'href="{reverse("submission-list")}?challenge=mul-two" id="history-all"' in html
