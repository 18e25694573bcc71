"""Evidence in the rubric: web/interviews/moments.py (what may be cited) and evidence.py (cite, remove, read back).

The world: Alice's interview with Cora, started 12 minutes before her first
Submit, which fails the hidden "positives" probe (correctness) and passes
"negatives"; she asks for a hint on it, autosaves, then submits the right
answer. Grading runs in the in-memory sandbox (``fake_sandbox``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge
from web.interviews import events, evidence, moments
from web.interviews.evidence import CitationNotFound, citation_add, citation_remove
from web.interviews.models import Citation, Interview, Snapshot
from web.interviews.services import InterviewError, interview_create, interview_end, interview_open, interview_submission_create, snapshot_save
from web.submissions.models import HintReveal, Submission
from web.submissions.services.reveal import hint_reveal

from .conftest import CORRECT, SUM_WRONG, reads_no_package_files


@dataclass
class Story:
    interview: Interview
    failed: Submission  # Submit: positives failed, negatives passed
    fixed: Submission  # Submit: all passed
    hint: HintReveal
    snapshot: Snapshot


def _submit(interview: Interview, user: User, code: str, capture: Any, kind: str = "submit") -> Submission:
    with capture(execute=True):
        submission = interview_submission_create(interview, user, "add-two", code, kind)
    submission.refresh_from_db()
    return submission


def _at(interview: Interview, obj: Any, field: str, seconds: int) -> None:
    """Move a row to ``seconds`` after the interview's start (the clock the card shows)."""
    assert interview.started_at is not None
    type(obj).objects.filter(pk=obj.pk).update(**{field: interview.started_at + timedelta(seconds=seconds)})
    obj.refresh_from_db()


@pytest.fixture
def story(coach: User, user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any) -> Story:
    interview = interview_create(coach, candidate_username="alice", challenges=[challenge], duration_minutes=60)
    interview_open(interview, user)
    Interview.objects.filter(pk=interview.pk).update(started_at=timezone.now() - timedelta(minutes=20))
    interview.refresh_from_db()
    failed = _submit(interview, user, SUM_WRONG, django_capture_on_commit_callbacks)
    hint_reveal(user, failed, "nudge")
    hint = HintReveal.objects.get(submission=failed)
    snapshot = snapshot_save(interview, user, "add-two", "def add(a, b):\n    return a + b  # thinking\n").snapshot
    fixed = _submit(interview, user, CORRECT, django_capture_on_commit_callbacks)
    _at(interview, failed, "created_at", 12 * 60 + 41)
    _at(interview, hint, "revealed_at", 13 * 60 + 5)
    _at(interview, snapshot, "created_at", 13 * 60 + 30)
    _at(interview, fixed, "created_at", 14 * 60 + 3)
    for submission in (failed, fixed):  # the code each one sent was stored as an autosave at the same moment
        Snapshot.objects.filter(interview=interview, code=submission.code).update(created_at=submission.created_at)
    return Story(interview, failed, fixed, hint, snapshot)


@pytest.fixture
def other_interview(coach: User, other_user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any) -> Story:
    """Mallory's interview with the same coach: its moments are not Alice's to cite."""
    interview = interview_create(coach, candidate_username="mallory", challenges=[challenge], duration_minutes=30)
    interview_open(interview, other_user)
    failed = _submit(interview, other_user, SUM_WRONG, django_capture_on_commit_callbacks)
    hint_reveal(other_user, failed, "nudge")
    snapshot = Snapshot.objects.filter(interview=interview).first()
    assert snapshot is not None
    return Story(interview, failed, failed, HintReveal.objects.get(submission=failed), snapshot)


# --- moments.py: what may be cited -------------------------------------------------------------------


def test_moments_list_every_kind_newest_first(story: Story) -> None:
    found = moments.interview_moments(story.interview)
    keys = [m.key for m in found]
    assert found[0].at == story.fixed.created_at and f"submit:{story.fixed.pk}" in keys[:2]
    assert {f"submit:{story.failed.pk}", f"hint:{story.hint.pk}", f"snapshot:{story.snapshot.pk}"} <= set(keys)
    assert [m.at for m in found] == sorted((m.at for m in found), reverse=True)
    # Each Run or Submit also stored its code as an autosave: those are moments too.
    assert sum(1 for m in found if m.kind == "snapshot") == Snapshot.objects.filter(interview=story.interview).count() == 3
    assert moments.interview_moments(story.interview, kinds=["hint"]) == [m for m in found if m.kind == "hint"]


def test_a_graded_submit_lists_its_probes_failed_first_and_a_later_pass_as_fixed(story: Story) -> None:
    failed = moments.moment_get(story.interview, f"submit:{story.failed.pk}")
    assert failed.graded and failed.submission_id == story.failed.pk and failed.verdict == "partial"
    assert [(p.name, p.category, p.outcome) for p in failed.probes] == [("positives", "correctness", "failed"), ("negatives", "signs", "passed")]
    assert failed.label.startswith(f"Submit #{story.failed.pk}: Partial, score")
    fixed = moments.moment_get(story.interview, f"submit:{story.fixed.pk}")
    assert {p.name: p.outcome for p in fixed.probes} == {"positives": "fixed", "negatives": "passed"}


def test_hint_and_autosave_moments_name_what_happened(story: Story) -> None:
    hint = moments.moment_get(story.interview, f"hint:{story.hint.pk}")
    assert hint.label == f"Hint nudge revealed (tier 1, nudge) after #{story.failed.pk}" and hint.challenge == "Add two integers"
    snap = moments.moment_get(story.interview, f"snapshot:{story.snapshot.pk}")
    assert snap.label == f"Code autosaved ({len(story.snapshot.code)} characters)" and snap.probes == ()


def test_the_payload_shows_iso_time_and_mm_ss_since_the_start(story: Story) -> None:
    payload = moments.moment_payload(story.interview, moments.moment_get(story.interview, f"submit:{story.failed.pk}"))
    assert payload["clock"] == "12:41" and payload["offset_seconds"] == 761
    assert payload["at"] == story.failed.created_at.isoformat()
    assert payload["probes"][0] == {"name": "positives", "category": "correctness", "passed": False, "outcome": "failed"}
    assert moments.clock(72 * 60 + 5) == "72:05"


@pytest.mark.parametrize(
    ("key", "message"),
    [("submit", "not a moment key"), ("submit:abc", "not a moment key"), (":12", "not a moment key"),
     ("keystroke:1", "kind 'keystroke' cannot be cited"), ("submit:999999", "no submit 999999 in this interview")],
)  # fmt: skip
def test_moment_get_refuses_what_is_not_a_moment_of_this_interview(story: Story, key: str, message: str) -> None:
    with pytest.raises(moments.UnknownMoment, match=message):
        moments.moment_get(story.interview, key)


def test_another_interviews_moments_are_not_this_ones(story: Story, other_interview: Story) -> None:
    for key in (f"submit:{other_interview.failed.pk}", f"hint:{other_interview.hint.pk}", f"snapshot:{other_interview.snapshot.pk}"):
        with pytest.raises(moments.UnknownMoment, match="in this interview"):
            moments.moment_get(story.interview, key)
    # A run key for a submit (the kind is part of the key) is not that submit either.
    with pytest.raises(moments.UnknownMoment, match="no run"):
        moments.moment_get(story.interview, f"run:{story.failed.pk}")


def test_a_new_kind_plugs_in_with_one_source(story: Story, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "_SOURCES", dict(events._SOURCES))
    at = story.interview.started_at + timedelta(minutes=5)  # type: ignore[operator]
    events.register_moment_source(["note"], lambda interview: [events.Moment(key="note:9", kind="note", at=at, label="Asked about dtypes")])
    assert "note" in events.moment_kinds()
    assert moments.moment_get(story.interview, "note:9").label == "Asked about dtypes"
    cited = citation_add(story.interview, story.interview.coach, criterion="communication", key="note:9")
    assert evidence.citation_text(story.interview, cited) == "Asked about dtypes at 05:00"


# --- evidence.py: citing ---------------------------------------------------------------------------


def test_a_failed_probe_and_its_fix_read_as_evidence(story: Story, coach: User) -> None:
    failed = citation_add(story.interview, coach, criterion="correctness", key=f"submit:{story.failed.pk}", probe="positives",
                          comment="  read the failing probe before changing code  ")  # fmt: skip
    fixed = citation_add(story.interview, coach, criterion="correctness", key=f"submit:{story.fixed.pk}", probe="positives")
    assert evidence.citation_text(story.interview, failed) == "correctness: failed positives at 12:41"
    assert evidence.citation_text(story.interview, fixed) == "correctness: fixed positives at 14:03"
    assert failed.comment == "read the failing probe before changing code"
    row = evidence.rubric_citations(story.interview)["correctness"]
    assert [c["text"] for c in row] == ["correctness: failed positives at 12:41", "correctness: fixed positives at 14:03"]
    first = row[0]
    assert first["key"] == f"submit:{story.failed.pk}" and first["submission_id"] == story.failed.pk
    assert first["probe"] == {"name": "positives", "category": "correctness", "outcome": "failed"}
    assert first["links"] == {
        "submission": f"/interviews/{story.interview.pk}/submissions/{story.failed.pk}/",
        "timeline": f"/interviews/{story.interview.pk}/live/#t=761",
    }
    assert evidence.rubric_citations(story.interview)["debugging"] == []


def test_a_hint_or_an_autosave_is_cited_whole(story: Story, coach: User) -> None:
    hint = citation_add(story.interview, coach, criterion="debugging", key=f"hint:{story.hint.pk}", comment="needed a nudge")
    snap = citation_add(story.interview, coach, criterion="debugging", key=f"snapshot:{story.snapshot.pk}")
    assert evidence.citation_text(story.interview, hint) == f"Hint nudge revealed (tier 1, nudge) after #{story.failed.pk} at 13:05"
    assert evidence.citation_text(story.interview, snap).endswith("characters) at 13:30")
    payloads = evidence.rubric_citations(story.interview)["debugging"]
    assert [p["links"]["timeline"].rsplit("#", 1)[1] for p in payloads] == ["t=785", "t=810"]
    assert payloads[1]["links"]["submission"] is None and payloads[1]["submission_label"] is None  # an autosave has no submission page
    # A hint links to the Submit whose result unlocked it.
    assert payloads[0]["submission_label"] == f"Submit #{story.failed.pk}"


def test_the_citation_keeps_the_moment_as_it_was_when_cited(story: Story, coach: User) -> None:
    citation_add(story.interview, coach, criterion="correctness", key=f"submit:{story.failed.pk}", probe="positives")
    # A later regrade changes the submission's result; the card still reads what the interviewer saw.
    Submission.objects.filter(pk=story.failed.pk).update(verdict="accepted", score=100.0, probes=[])
    cited = evidence.rubric_citations(story.interview)["correctness"][0]
    assert cited["label"].startswith(f"Submit #{story.failed.pk}: Partial") and cited["probe"]["outcome"] == "failed"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"criterion": "charisma"}, "Unknown rubric criterion 'charisma'"),
        ({"key": ""}, "Name the moment"),
        ({"key": "submit:999999"}, "no submit 999999 in this interview"),
        ({"key": "nonsense"}, "not a moment key"),
        ({"probe": "no_such_probe"}, r"has no probe 'no_such_probe'; its probes: positives, negatives"),
        ({"probe": 3}, "Name the probe"),
        ({"comment": "x" * 301}, "limited to 300 characters"),
        ({"comment": None}, "comment must be text"),
    ],
)
def test_citing_refuses_bad_input_with_the_reason_and_stores_nothing(story: Story, coach: User, kwargs: dict[str, Any], message: str) -> None:
    values: dict[str, Any] = {"criterion": "correctness", "key": f"submit:{story.failed.pk}", "probe": "", "comment": "", **kwargs}
    with pytest.raises(InterviewError, match=message):
        citation_add(story.interview, coach, **values)
    assert not Citation.objects.exists()


def test_a_probe_only_for_a_graded_run_or_submit(story: Story, coach: User, user: User, django_capture_on_commit_callbacks: Any) -> None:
    with pytest.raises(InterviewError, match="Only a run or a submit has probes; hint:"):
        citation_add(story.interview, coach, criterion="debugging", key=f"hint:{story.hint.pk}", probe="positives")
    with django_capture_on_commit_callbacks(execute=False):  # queued, never graded
        queued = interview_submission_create(story.interview, user, "add-two", CORRECT + "# again\n", "run")
    with pytest.raises(InterviewError, match=f"#{queued.pk} is not graded yet"):
        citation_add(story.interview, coach, criterion="debugging", key=f"run:{queued.pk}", probe="small")
    whole = citation_add(story.interview, coach, criterion="debugging", key=f"run:{queued.pk}")
    assert whole.label == f"Run #{queued.pk}: Queued" and Citation.objects.count() == 1


def test_a_foreign_interviews_moment_or_probe_is_refused(story: Story, other_interview: Story, coach: User) -> None:
    for key in (f"submit:{other_interview.failed.pk}", f"hint:{other_interview.hint.pk}", f"snapshot:{other_interview.snapshot.pk}"):
        with pytest.raises(InterviewError, match="in this interview"):
            citation_add(story.interview, coach, criterion="debugging", key=key)
    # A probe of the public Run set is not a probe of this Submit.
    with pytest.raises(InterviewError, match="has no probe 'small'"):
        citation_add(story.interview, coach, criterion="debugging", key=f"submit:{story.failed.pk}", probe="small")
    assert not Citation.objects.exists()


def test_the_same_moment_once_per_row_and_a_row_has_a_limit(story: Story, coach: User, monkeypatch: pytest.MonkeyPatch) -> None:
    key = f"submit:{story.failed.pk}"
    citation_add(story.interview, coach, criterion="correctness", key=key)
    with pytest.raises(InterviewError, match="Correctness already cites this moment"):
        citation_add(story.interview, coach, criterion="correctness", key=key, comment="again")
    citation_add(story.interview, coach, criterion="correctness", key=key, probe="positives")  # one probe of it: another citation
    with pytest.raises(InterviewError, match="already cites this probe"):
        citation_add(story.interview, coach, criterion="correctness", key=key, probe="positives")
    citation_add(story.interview, coach, criterion="numerics", key=key)  # another row may cite it too
    monkeypatch.setattr(evidence, "CITATIONS_PER_ROW", 2)
    with pytest.raises(InterviewError, match="Correctness has 2 citations already; remove one first"):
        citation_add(story.interview, coach, criterion="correctness", key=f"hint:{story.hint.pk}")
    assert Citation.objects.count() == 3


def test_only_the_coach_or_staff_cite_and_remove(story: Story, coach: User, user: User, other_coach: User, staff: User) -> None:
    key = f"submit:{story.failed.pk}"
    for who in (user, other_coach):
        with pytest.raises(InterviewError, match="Only the interview's coach"):
            citation_add(story.interview, who, criterion="correctness", key=key)
    cited = citation_add(story.interview, staff, criterion="correctness", key=key)
    for who in (user, other_coach):
        with pytest.raises(InterviewError, match="Only the interview's coach"):
            citation_remove(story.interview, who, cited.pk)
    assert Citation.objects.filter(pk=cited.pk).exists()
    citation_remove(story.interview, coach, cited.pk)
    assert not Citation.objects.exists()


def test_removing_works_once_and_only_in_its_own_interview(story: Story, other_interview: Story, coach: User) -> None:
    mine = citation_add(story.interview, coach, criterion="debugging", key=f"hint:{story.hint.pk}")
    theirs = citation_add(other_interview.interview, coach, criterion="debugging", key=f"hint:{other_interview.hint.pk}")
    with pytest.raises(CitationNotFound, match="no such citation"):
        citation_remove(story.interview, coach, theirs.pk)
    citation_remove(story.interview, coach, mine.pk)
    with pytest.raises(CitationNotFound):
        citation_remove(story.interview, coach, mine.pk)
    assert list(Citation.objects.values_list("pk", flat=True)) == [theirs.pk]


def test_citing_still_works_after_the_end(story: Story, coach: User) -> None:
    interview_end(story.interview, coach)
    citation_add(story.interview, coach, criterion="correctness", key=f"submit:{story.fixed.pk}", probe="positives")
    assert [c["text"] for c in evidence.rubric_citations(story.interview)["correctness"]] == ["correctness: fixed positives at 14:03"]


def test_the_scorecard_export_has_recommendation_notes_rubric_and_citations(story: Story, coach: User) -> None:
    from web.interviews.services import interview_assess

    interview_assess(story.interview, coach, notes="Solid.", rubric={"correctness": {"score": 3, "comment": "one slip"}}, recommendation="yes")
    citation_add(story.interview, coach, criterion="correctness", key=f"submit:{story.failed.pk}", probe="positives")
    data = evidence.scorecard_export(story.interview)
    assert (data["recommendation"], data["recommendation_label"], data["notes"]) == ("yes", "Yes", "Solid.")
    assert (data["candidate"], data["interviewer"], data["state"]) == ("alice", "cora", "live")
    assert [r["criterion"] for r in data["rubric"]] == ["correctness", "debugging", "numerics", "communication"]
    correctness = data["rubric"][0]
    assert (correctness["score"], correctness["comment"]) == (3, "one slip")
    assert [c["text"] for c in correctness["citations"]] == ["correctness: failed positives at 12:41"]
    assert data["rubric"][1] == {"criterion": "debugging", "label": "Debugging", "score": None, "comment": "", "citations": [], "evidence": []}
    assert data["challenges"][0]["slug"] == "add-two" and data["challenges"][0]["submits"] == 2


# --- The pages and JSON endpoints (views.py) -------------------------------------------------------------


def test_moments_json_for_the_coach_only(story: Story, coach_client: Client, client: Client, user: User, other_coach: User) -> None:
    url = reverse("interview-moments", args=[story.interview.pk])
    data = coach_client.get(url).json()
    assert data["moments"][0]["key"] == f"submit:{story.fixed.pk}" and set(data["kinds"]) >= {"run", "submit", "hint", "snapshot"}
    client.force_login(other_coach)
    assert client.get(url).status_code == 404
    client.force_login(user)
    assert client.get(url).status_code == 404


def test_the_moments_cost_one_query_per_kind_and_no_code_or_package(story: Story, coach_client: Client) -> None:
    url = reverse("interview-moments", args=[story.interview.pk])
    coach_client.get(url)  # the session's first reads
    # One query per kind: runs and submits, hints, autosaves, focus changes, notes (and the session's own reads).
    with reads_no_package_files(max_queries=9) as queries:
        assert len(coach_client.get(url).json()["moments"]) == 6  # 2 submits, 1 hint, 3 autosaves
    # Autosaves are listed by size: their code is not read.
    snapshot_reads = [q["sql"] for q in queries.captured_queries if '"interviews_snapshot"' in q["sql"]]
    assert snapshot_reads and all('"interviews_snapshot"."code",' not in sql for sql in snapshot_reads)


def _post(client: Client, url: str, body: Any) -> Any:
    return client.post(url, data=body, content_type="application/json")


def test_cite_and_uncite_endpoints_answer_every_rows_citations(story: Story, coach_client: Client) -> None:
    cite = reverse("interview-cite", args=[story.interview.pk])
    answer = _post(coach_client, cite, {"criterion": "correctness", "key": f"submit:{story.failed.pk}", "probe": "positives", "comment": "ok"})
    assert answer.status_code == 201
    data = answer.json()
    assert [c["text"] for c in data["citations"]["correctness"]] == ["correctness: failed positives at 12:41"]
    refused = _post(coach_client, cite, {"criterion": "correctness", "key": f"submit:{story.failed.pk}", "probe": "nope"})
    assert refused.status_code == 400 and "has no probe 'nope'" in refused.json()["error"]
    assert _post(coach_client, cite, {"criterion": "correctness", "key": "x:1", "extra": 1}).status_code == 400
    assert coach_client.post(cite, data="not json", content_type="application/json").status_code == 400

    uncite = reverse("interview-uncite", args=[story.interview.pk])
    assert _post(coach_client, uncite, {"id": "1"}).status_code == 400
    removed = _post(coach_client, uncite, {"id": data["cited"]})
    assert removed.status_code == 200 and removed.json()["citations"]["correctness"] == []
    gone = _post(coach_client, uncite, {"id": data["cited"]})
    assert gone.status_code == 404 and "no such citation" in gone.json()["error"]


def test_others_cannot_cite_or_uncite(story: Story, coach: User, client: Client, user: User, other_coach: User) -> None:
    cited = citation_add(story.interview, coach, criterion="debugging", key=f"hint:{story.hint.pk}")
    body = {"criterion": "debugging", "key": f"submit:{story.failed.pk}"}
    client.force_login(other_coach)
    assert _post(client, reverse("interview-cite", args=[story.interview.pk]), body).status_code == 404
    assert _post(client, reverse("interview-uncite", args=[story.interview.pk]), {"id": cited.pk}).status_code == 404
    client.force_login(user)
    assert _post(client, reverse("interview-cite", args=[story.interview.pk]), body).status_code == 404
    assert list(Citation.objects.values_list("pk", flat=True)) == [cited.pk]


def test_the_live_view_offers_citing_in_every_rubric_row(story: Story, coach: User, coach_client: Client) -> None:
    citation_add(story.interview, coach, criterion="debugging", key=f"hint:{story.hint.pk}")
    page = coach_client.get(reverse("interview-live", args=[story.interview.pk]))
    html = page.content.decode()
    assert html.count('class="link-button cite-open"') == 4 and 'id="cite-dialog"' in html
    assert "js/interview-rubric.js" in html
    config = page.context["page_config"]
    assert config["momentsUrl"] == reverse("interview-moments", args=[story.interview.pk])
    assert [c["key"] for c in config["citations"]["debugging"]] == [f"hint:{story.hint.pk}"]


def test_the_printed_scorecard_shows_each_rows_citations_with_links(story: Story, coach: User, coach_client: Client) -> None:
    citation_add(story.interview, coach, criterion="correctness", key=f"submit:{story.failed.pk}", probe="positives",
                 comment="<b>read</b> the probe first")  # fmt: skip
    citation_add(story.interview, coach, criterion="correctness", key=f"submit:{story.fixed.pk}", probe="positives")
    citation_add(story.interview, coach, criterion="correctness", key=f"hint:{story.hint.pk}")
    html = coach_client.get(reverse("interview-scorecard", args=[story.interview.pk])).content.decode()
    row = html[html.index('<tr data-criterion="correctness">') : html.index('<tr data-criterion="debugging">')]
    # The failure and its fix read as one line, each part linking to its moment; the hint is a line of its own.
    lines = re.findall(r'<li class="citation [^"]*" data-keys="([^"]*)">(.*?)</li>', row, flags=re.S)
    assert [keys for keys, _ in lines] == [f"submit:{story.failed.pk} submit:{story.fixed.pk}", f"hint:{story.hint.pk}"]
    probe_line = lines[0][1]
    text = re.sub(r"<[^>]+>", "", probe_line)
    assert re.sub(r"\s+", " ", text).strip().startswith("correctness: failed positives at 12:41, fixed at 14:03 · Add two integers · Submit #")
    assert f'href="/interviews/{story.interview.pk}/live/#t=761">correctness: failed positives at 12:41</a>' in probe_line
    assert f'href="/interviews/{story.interview.pk}/live/#t=843">fixed at 14:03</a>' in probe_line
    assert f'href="/interviews/{story.interview.pk}/submissions/{story.failed.pk}/">Submit #{story.failed.pk}</a>' in probe_line
    assert f'href="/interviews/{story.interview.pk}/submissions/{story.fixed.pk}/">Submit #{story.fixed.pk}</a>' in probe_line
    assert "&lt;b&gt;read&lt;/b&gt; the probe first" in probe_line and "<b>read" not in row


def test_evidence_lines_put_one_probes_citations_together_in_time_order(story: Story, coach: User) -> None:
    key_failed, key_fixed = f"submit:{story.failed.pk}", f"submit:{story.fixed.pk}"
    citation_add(story.interview, coach, criterion="correctness", key=key_fixed, probe="positives")
    citation_add(story.interview, coach, criterion="correctness", key=key_fixed, probe="negatives")
    citation_add(story.interview, coach, criterion="correctness", key=f"hint:{story.hint.pk}")
    citation_add(story.interview, coach, criterion="correctness", key=key_failed, probe="positives")
    citation_add(story.interview, coach, criterion="correctness", key=key_failed)
    lines = evidence.evidence_lines(evidence.rubric_citations(story.interview)["correctness"])
    assert [line["text"] for line in lines] == [
        "correctness: failed positives at 12:41, fixed at 14:03",
        f"Submit #{story.failed.pk}: Partial, score 33.3 at 12:41",
        f"Hint nudge revealed (tier 1, nudge) after #{story.failed.pk} at 13:05",
        "signs: passed negatives at 14:03",
    ]
    assert lines[0]["keys"] == [key_failed, key_fixed]
    exported = evidence.scorecard_export(story.interview)["rubric"][0]["evidence"]
    assert exported[0] == {"text": "correctness: failed positives at 12:41, fixed at 14:03", "keys": [key_failed, key_fixed]}


def test_focus_changes_and_notes_at_a_moment_are_citable_with_the_replays_keys(story: Story, coach: Any) -> None:
    from web.interviews.models import FocusEvent, TimelineNote
    from web.interviews.timeline import interview_timeline

    at = story.interview.started_at + timedelta(minutes=5)
    focus = FocusEvent.objects.create(interview=story.interview, state="lost", reason="tab", created_at=at)
    note = TimelineNote.objects.create(interview=story.interview, author=coach, text="talks through the fix", created_at=at)
    keys = {m.key for m in moments.interview_moments(story.interview)}
    assert {f"focus:{focus.pk}", f"note:{note.pk}"} <= keys
    # The same keys as the replay's timeline, so a citation's #t link lands on its marker.
    assert {f"focus:{focus.pk}", f"note:{note.pk}"} <= {e["key"] for e in interview_timeline(story.interview)}
    cited = citation_add(story.interview, coach, criterion="communication", key=f"note:{note.pk}", comment="")
    assert cited.label == "Note: talks through the fix" and cited.moment_at == at
