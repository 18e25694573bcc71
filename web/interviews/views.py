"""Mock interview pages and their JSON endpoints: check access, call one service or selector, respond.

Coach side (the interview's coach, or staff): the list, the form, the live
view and its poll, a challenge's autosave timeline, the assessment and the
moments its rubric rows cite (moments.json, cite, uncite), the early end,
the scorecard. Candidate side, reached only through the private
link and only by the invited candidate: the interview page, its clock poll,
autosave, run and submit. Whoever else asks for one interview's page gets a
404, a candidate as much as another coach: nothing says the interview
exists. The coach-wide pages (the list, the form, templates, statistics)
answer 403 to non-coaches, like every coach page. Refusals are raised and
answered by web/errors.py: ``{"error": message}`` for the JSON endpoints.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from web.accounts.roles import coach_required
from web.challenges.models import Difficulty
from web.challenges.selectors import challenge_list
from web.errors import NotFound, Refused
from web.interviews import bank, events, evidence, keys, moments, presenters, selectors, services
from web.interviews.access import candidate_interview, coach_interview, json_login, json_object
from web.interviews.forms import InterviewCreateForm, SessionForm, TemplateForm
from web.interviews.models import Criterion, Interview, InterviewTemplate, Recommendation, State
from web.interviews.session_settings import candidate_submission_payload, interview_status_url
from web.interviews.stats import MIN_SOLVES, challenge_stats
from web.submissions.models import Kind
from web.submissions.request_code import code_from_request
from web.submissions.selectors import hint_revealed_ids
from web.submissions.services.cancel import submission_cancel
from web.submissions.services.regrade import submission_regrade_own
from web.submissions.services.reveal import hint_reveal

# --- Coach pages -----------------------------------------------------------------------------


@coach_required
@require_GET
def interview_list(request: HttpRequest) -> HttpResponse:
    interviews = list(selectors.interviews_for_coach(request.user))
    now = timezone.now()
    rows = [{"interview": i, "state": i.state(now)} for i in interviews]
    return render(request, "interviews/list.html", {"rows": rows})


def _picker_context(form: SessionForm, rows: list[presenters.PickerRow]) -> dict[str, Any]:
    tracks = sorted({r.challenge.track for r in rows})
    tags = sorted({str(t) for r in rows for t in r.challenge.tags or []})
    difficulties = [(value, label) for value, label in Difficulty.choices if any(r.challenge.difficulty == value for r in rows)]
    return {"form": form, "picker": rows, "tracks": tracks, "tags": tags, "difficulties": difficulties}


@coach_required
@require_http_methods(["GET", "POST"])
def interview_create(request: HttpRequest) -> HttpResponse:
    catalogue = list(challenge_list(user=None))
    stats = challenge_stats(catalogue)
    template = None
    if request.method == "POST":
        form = InterviewCreateForm(request.POST, catalogue=catalogue)
        valid = form.is_valid()
        if form.cleaned_data.get("template"):
            template = bank.template_get_for_coach(form.cleaned_data["template"], request.user)
        fields = {
            "candidate_username": form.cleaned_data.get("candidate", ""), "challenges": form.plans(),
            "duration_minutes": form.cleaned_data.get("duration_minutes"), "template": template, **form.settings(),
        }  # fmt: skip
        try:
            if not valid:
                services.interview_validate(request.user, **fields)  # every other refusal, beside what failed to parse
            else:
                interview = services.interview_create(request.user, **fields)
                return redirect("interview-live", interview_id=interview.pk)
        except services.InterviewInvalid as exc:
            form.add_refusals(exc.errors)
        rows = presenters.picker_rows(stats, data=request.POST)
    else:
        initial: dict[str, Any] = {}
        plans = None
        if request.GET.get("template", "").isdigit():
            template = bank.template_get_for_coach(int(request.GET["template"]), request.user)
            if template is None:
                raise NotFound("No such template.")
            initial = bank.template_initial(template)
            plans = initial.pop("plans")
        form = InterviewCreateForm(initial=initial, catalogue=catalogue)
        rows = presenters.picker_rows(stats, plans=plans)
    context = _picker_context(form, rows)
    context["template"] = template
    return render(request, "interviews/create.html", context)


# --- The question bank: templates, challenge statistics -------------------------------------


@coach_required
@require_GET
def template_list(request: HttpRequest) -> HttpResponse:
    return render(request, "interviews/templates.html", {"templates": bank.templates_for_coach(request.user)})


def _template_form(request: HttpRequest, template: InterviewTemplate | None) -> HttpResponse:
    catalogue = list(challenge_list(user=None))
    stats = challenge_stats(catalogue)
    if request.method == "POST":
        form = TemplateForm(request.POST, catalogue=catalogue)
        valid = form.is_valid()
        fields = {"name": form.cleaned_data.get("name", ""), "challenges": form.plans(), "template": template, **form.settings()}
        try:
            if not valid:
                bank.template_validate(request.user, **fields)  # every other refusal, beside what failed to parse
            else:
                saved = bank.template_save(request.user, **fields)
                messages.success(request, f"Template “{saved.name}” saved.")
                return redirect("interview-templates")
        except services.InterviewInvalid as exc:
            form.add_refusals(exc.errors)
        rows = presenters.picker_rows(stats, data=request.POST)
    else:
        initial: dict[str, Any] = {}
        plans = None
        if template is not None:
            initial = {"name": template.name, "hint_policy": template.hint_policy, "hint_penalty": template.hint_penalty}
            initial["hidden_feedback"] = template.hidden_feedback
            plans = bank.template_plans(template)
        form = TemplateForm(initial=initial, catalogue=catalogue)
        rows = presenters.picker_rows(stats, plans=plans)
    context = _picker_context(form, rows)
    context["template"] = template
    return render(request, "interviews/template_form.html", context)


@coach_required
@require_http_methods(["GET", "POST"])
def template_create(request: HttpRequest) -> HttpResponse:
    return _template_form(request, None)


def _coach_template(request: HttpRequest, template_id: int) -> InterviewTemplate:
    template = bank.template_get_for_coach(template_id, request.user)
    if template is None:
        raise NotFound("No such template.")
    return template


@coach_required
@require_http_methods(["GET", "POST"])
def template_edit(request: HttpRequest, template_id: int) -> HttpResponse:
    return _template_form(request, _coach_template(request, template_id))


@coach_required
@require_POST
def template_delete(request: HttpRequest, template_id: int) -> HttpResponse:
    template = _coach_template(request, template_id)
    name = template.name
    bank.template_delete(request.user, template)
    messages.success(request, f"Template “{name}” deleted; interviews made from it keep their settings.")
    return redirect("interview-templates")


@coach_required
@require_GET
def challenge_statistics(request: HttpRequest) -> HttpResponse:
    # The challenges with past sessions first (most first), then the rest in catalogue order.
    rows = sorted(challenge_stats(), key=lambda s: -s.sessions)
    return render(request, "interviews/stats.html", {"rows": rows, "min_solves": MIN_SOLVES})


@login_required
@require_GET
def interview_live(request: HttpRequest, interview_id: int) -> HttpResponse:
    interview = coach_interview(request, interview_id)
    config = {
        "stateUrl": reverse("interview-live-state", args=[interview.pk]),
        "assessUrl": reverse("interview-assess", args=[interview.pk]),
        "endUrl": reverse("interview-end", args=[interview.pk]),
        "scorecardUrl": reverse("interview-scorecard", args=[interview.pk]),
        "rubric": selectors.interview_rubric(interview),
        # Citing moments in the rubric (interview-rubric.js).
        "momentsUrl": reverse("interview-moments", args=[interview.pk]),
        "citeUrl": reverse("interview-cite", args=[interview.pk]),
        "unciteUrl": reverse("interview-uncite", args=[interview.pk]),
        "citations": evidence.rubric_citations(interview),
        "keysSocket": keys.watch_socket_path(interview.pk),
    }
    return render(
        request,
        "interviews/live.html",
        {
            "interview": interview,
            "link": request.build_absolute_uri(reverse("interview-candidate", args=[interview.token])),
            "challenges": selectors.interview_challenges(interview),
            "criteria": Criterion.choices,
            "recommendations": Recommendation.choices,
            "scores": range(1, 5),
            "rubric": selectors.interview_rubric(interview),
            "page_config": config,
        },
    )


@json_login
@require_GET
def interview_live_state(request: HttpRequest, interview_id: int) -> JsonResponse:
    interview = coach_interview(request, interview_id)
    return JsonResponse(selectors.interview_live_state(interview))


@json_login
@require_GET
def interview_timeline(request: HttpRequest, interview_id: int, slug: str) -> JsonResponse:
    interview = coach_interview(request, interview_id)
    challenge = next((c for c in selectors.interview_challenges(interview) if c.slug == slug), None)
    if challenge is None:
        raise NotFound(f"The challenge {slug!r} is not part of this interview.")
    after, keys_after = request.GET.get("after", "0"), request.GET.get("keys_after", "0")
    if not after.isdigit():
        raise Refused(f"after must be a snapshot id (a whole number), not {after!r}.")
    if not keys_after.isdigit():
        raise Refused(f"keys_after must be a keystroke event id (a whole number), not {keys_after!r}.")
    # The autosaves and, where the keystroke stream reached the server, every edit (the replay's keystroke resolution).
    keys, more = selectors.key_timeline(interview, challenge, after_id=int(keys_after))
    snapshots = selectors.snapshot_timeline(interview, challenge, after_id=int(after))
    return JsonResponse({"slug": slug, "snapshots": snapshots, "keys": keys, "more_keys": more})


@json_login
@require_POST
def interview_assess(request: HttpRequest, interview_id: int) -> JsonResponse:
    """JSON body: any of {"notes": str, "rubric": {criterion: {"score": 1-4, "comment": str}}, "recommendation": str}."""
    interview = coach_interview(request, interview_id)
    data = json_object(request, {"notes", "rubric", "recommendation"})
    rubric = data.get("rubric")
    if rubric is not None and not isinstance(rubric, dict):
        raise Refused('"rubric" must be an object: {criterion: {"score": 1-4, "comment": "..."}}.')
    recommendation = data.get("recommendation")
    if recommendation is not None and not isinstance(recommendation, str):
        raise Refused('"recommendation" must be text.')
    services.interview_assess(interview, request.user, notes=data.get("notes"), rubric=rubric, recommendation=recommendation)
    return JsonResponse({"saved": True, "rubric": selectors.interview_rubric(interview), "recommendation": interview.recommendation})


@json_login
@require_GET
def interview_moments(request: HttpRequest, interview_id: int) -> JsonResponse:
    """What the rubric may cite: the interview's moments, newest first."""
    interview = coach_interview(request, interview_id)
    found = moments.interview_moments(interview)
    return JsonResponse({"moments": [moments.moment_payload(interview, m) for m in found], "kinds": events.moment_kinds()})


@json_login
@require_POST
def interview_cite(request: HttpRequest, interview_id: int) -> JsonResponse:
    """JSON body: {"criterion", "key", "probe" (optional), "comment" (optional)}; answers every row's citations."""
    interview = coach_interview(request, interview_id)
    data = json_object(request, {"criterion", "key", "probe", "comment"})
    citation = evidence.citation_add(
        interview, request.user, criterion=data.get("criterion") or "", key=data.get("key") or "",
        probe=data.get("probe") or "", comment=data.get("comment") or "",
    )  # fmt: skip
    return JsonResponse({"cited": citation.pk, "citations": evidence.rubric_citations(interview)}, status=201)


@json_login
@require_POST
def interview_uncite(request: HttpRequest, interview_id: int) -> JsonResponse:
    """JSON body: {"id": citation id}; answers every row's citations."""
    interview = coach_interview(request, interview_id)
    data = json_object(request, {"id"})
    citation_id = data.get("id")
    if isinstance(citation_id, bool) or not isinstance(citation_id, int):
        raise Refused('"id" must be the citation\'s id (a whole number).')
    evidence.citation_remove(interview, request.user, citation_id)
    return JsonResponse({"removed": citation_id, "citations": evidence.rubric_citations(interview)})


@login_required
@require_POST
def interview_end(request: HttpRequest, interview_id: int) -> HttpResponse:
    interview = coach_interview(request, interview_id)
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        services.interview_end(interview, request.user)
    except services.InterviewError as exc:
        if wants_json:
            raise  # answered as JSON by web/errors.py
        messages.info(request, str(exc))
    if wants_json:
        return JsonResponse({"state": interview.state(timezone.now()), "scorecard_url": reverse("interview-scorecard", args=[interview.pk])})
    return redirect("interview-scorecard", interview_id=interview.pk)


@login_required
@require_GET
def interview_scorecard(request: HttpRequest, interview_id: int) -> HttpResponse:
    interview = coach_interview(request, interview_id)
    card = selectors.interview_scorecard(interview)
    cited = evidence.rubric_citations(interview)
    rubric = [(row, evidence.evidence_lines(cited[row.criterion])) for row in card.rubric]
    context = {"card": card, "rubric": rubric, "interview": interview, "state": interview.state(timezone.now())}
    return render(request, "interviews/scorecard.html", context)


# --- Candidate pages -------------------------------------------------------------------------


@login_required
@require_GET
def interview_mine(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    rows = [{"interview": i, "state": i.state(now)} for i in selectors.interviews_for_candidate(request.user)]
    return render(request, "interviews/mine.html", {"rows": rows})


@login_required
@require_GET
def interview_candidate(request: HttpRequest, token: str) -> HttpResponse:
    interview = candidate_interview(request, token)
    services.interview_open(interview, request.user)
    items, config = presenters.candidate_page(interview)
    context = {"interview": interview, "items": items, "page_config": config, "locked": config["state"] != State.LIVE}
    return render(request, "interviews/candidate.html", context)


@json_login
@require_GET
def interview_candidate_state(request: HttpRequest, token: str) -> JsonResponse:
    return JsonResponse(selectors.interview_candidate_state(candidate_interview(request, token)))


def _create(request: HttpRequest, token: str, slug: str, kind: str) -> JsonResponse:
    interview = candidate_interview(request, token)
    submission = services.interview_submission_create(interview, request.user, slug, code_from_request(request), kind)
    return JsonResponse(
        {"id": submission.pk, "kind": submission.kind, "status": submission.status, "url": interview_status_url(interview, submission.pk)},
        status=202,
    )


@json_login
@require_POST
def interview_run(request: HttpRequest, token: str, slug: str) -> JsonResponse:
    return _create(request, token, slug, Kind.RUN)


@json_login
@require_POST
def interview_submit(request: HttpRequest, token: str, slug: str) -> JsonResponse:
    return _create(request, token, slug, Kind.SUBMIT)


@json_login
@require_POST
def interview_autosave(request: HttpRequest, token: str, slug: str) -> JsonResponse:
    interview = candidate_interview(request, token)
    saved = services.snapshot_save(interview, request.user, slug, code_from_request(request))
    return JsonResponse({"saved": saved.created, "id": saved.snapshot.pk, "at": saved.snapshot.created_at.isoformat()})


# --- The candidate's results, under the interview's settings ----------------------------------


def _candidate_submission(request: HttpRequest, token: str, pk: int) -> tuple[Interview, Any]:
    interview = candidate_interview(request, token)
    submission = selectors.interview_submission_for_candidate(interview, pk)
    if submission is None:
        raise NotFound("No such submission in this interview.")
    return interview, submission


def _candidate_payload(request: HttpRequest, interview: Interview, submission: Any, status: int = 200) -> JsonResponse:
    revealed = hint_revealed_ids(request.user, submission.challenge_id)
    return JsonResponse(candidate_submission_payload(interview, submission, revealed), status=status)


@json_login
@require_GET
def interview_submission_status(request: HttpRequest, token: str, pk: int) -> JsonResponse:
    """A submission of the interview, as its settings let the candidate see it (hidden-probe detail, hints)."""
    interview, submission = _candidate_submission(request, token, pk)
    return _candidate_payload(request, interview, submission)


@json_login
@require_POST
def interview_hint_reveal(request: HttpRequest, token: str, pk: int, hint_id: str) -> JsonResponse:
    interview, submission = _candidate_submission(request, token, pk)
    hint_reveal(request.user, submission, hint_id)  # refused with hints off (session_settings.hint_reveal_refusal)
    return _candidate_payload(request, interview, submission)


@json_login
@require_POST
def interview_submission_regrade(request: HttpRequest, token: str, pk: int) -> JsonResponse:
    interview, submission = _candidate_submission(request, token, pk)
    return _candidate_payload(request, interview, submission_regrade_own(request.user, submission), status=202)


@json_login
@require_POST
def interview_submission_cancel(request: HttpRequest, token: str, pk: int) -> JsonResponse:
    interview, submission = _candidate_submission(request, token, pk)
    return _candidate_payload(request, interview, submission_cancel(request.user, submission))
