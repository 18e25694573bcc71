"""The candidate's own pages: progress (/progress/), the history of submissions (/submissions/) and one submission (/submissions/<id>/).

Each view checks the login, asks web.submissions.progress (or the owned-submission
selector) and renders. What a submission's page shows of its result is the
challenge page's payload (presenters.submission_payload, through
grader.feedback.candidate_view), never the stored result itself.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from web.errors import NotFound
from web.submissions import progress
from web.submissions.models import Kind
from web.submissions.presenters import submission_payload
from web.submissions.selectors import hint_revealed_ids, submission_get_owned

HISTORY_PAGE_SIZE = 25


@require_GET
@login_required
def progress_page(request: HttpRequest) -> HttpResponse:
    overview = progress.progress_for(request.user)
    return render(
        request,
        "submissions/progress.html",
        {
            "progress": overview,
            "series": progress.score_series(request.user),
            "track_titles": {track.slug: track.title for track in overview.tracks},
            "recent": list(progress.submission_history_all(request.user)[:5]),
        },
    )


@require_GET
@login_required
def history_page(request: HttpRequest) -> HttpResponse:
    filters = progress.history_filters(request.GET)
    paginator = Paginator(progress.submission_history_all(request.user, filters), HISTORY_PAGE_SIZE)
    page = paginator.get_page(request.GET.get("page"))
    # The filters again, for the page links: every link keeps them.
    kept = urlencode({k: v for k, v in vars(filters).items() if v})
    return render(
        request,
        "submissions/history.html",
        {"page": page, "filters": filters, "choices": progress.history_choices(request.user), "query": kept},
    )


@require_GET
@login_required
def submission_page(request: HttpRequest, pk: int) -> HttpResponse:
    submission = submission_get_owned(pk, request.user)
    if submission is None:
        raise NotFound("No such submission.")
    payload = submission_payload(submission, hint_revealed_ids(request.user, submission.challenge_id))
    return render(
        request,
        "submissions/detail.html",
        {
            "submission": submission,
            "payload": payload,
            "code": submission.code,  # deferred by the selector: loaded here, for its owner only
            "is_run": submission.kind == Kind.RUN,
            "history_url": f"{reverse('submission-list')}?{urlencode({'challenge': submission.challenge.slug})}",
        },
    )
