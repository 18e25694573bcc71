"""Catalogue and challenge pages: check access, fetch through selectors, render.

Anonymous visitors may browse and read; the editor's Run and Submit need a
login (the JSON endpoints in web.submissions.views enforce it).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from web.challenges import learn, selectors
from web.challenges.models import Challenge, Difficulty
from web.challenges.rendering import markdown_to_html
from web.errors import Forbidden, NotFound
from web.submissions.progress import challenge_marks
from web.submissions.selectors import submission_history
from web.submissions.services.drafts import draft_for
from web.submissions.services.intake import MAX_CODE_BYTES
from web.submissions.waiting import typical_grading


def catalogue(request: HttpRequest) -> HttpResponse:
    track = request.GET.get("track") or None
    difficulty = request.GET.get("difficulty") or None
    if difficulty not in (None, *Difficulty.values):
        difficulty = None  # an unknown filter value shows everything rather than an empty page
    challenges = list(selectors.challenge_list(user=request.user, track=track, difficulty=difficulty))
    # The signed-in user's solved / attempted mark on each card, from one query (none for visitors).
    marks = challenge_marks(request.user)
    for challenge in challenges:
        challenge.mark = marks.get(challenge.pk)  # type: ignore[attr-defined]
    return render(
        request,
        "challenges/catalogue.html",
        {
            "groups": selectors.catalogue_groups(challenges),  # type: ignore[arg-type]
            "marks_shown": request.user.is_authenticated,
            "tracks": selectors.challenge_tracks(user=request.user),
            "difficulties": selectors.difficulty_choices(),
            "selected_track": track,
            "selected_difficulty": difficulty,
        },
    )


def track_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A track's page: what it teaches, its challenges from warm-up to hard, the signed-in user's marks and best scores."""
    track = selectors.track_get(slug)
    challenges = list(selectors.challenge_list(user=request.user, track=slug))
    if track is None and not challenges:
        raise NotFound(f"No track {slug!r}.")
    marks = challenge_marks(request.user, challenges)
    rows = [{"challenge": c, "mark": marks.get(c.pk)} for c in challenges]
    return render(
        request,
        "challenges/track.html",
        {
            "track": track,
            "slug": slug,
            "rows": rows,
            "marks_shown": request.user.is_authenticated,
            "description_html": markdown_to_html(track.description) if track else "",
        },
    )


def challenge_detail(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = _visible_challenge(request, slug)
    version = challenge.current_version
    history = submission_history(request.user, challenge) if request.user.is_authenticated else []
    access = learn.learn_access(request.user, challenge) if request.user.is_authenticated else None
    draft = draft_for(request.user, challenge) if request.user.is_authenticated else None
    typical = typical_grading(challenge)
    page_config = {
        "slug": challenge.slug,
        "version": version.version,
        "runUrl": reverse("challenge-run", args=[challenge.slug]),
        "submitUrl": reverse("challenge-submit", args=[challenge.slug]),
        "authenticated": request.user.is_authenticated,
        "loginUrl": f"{reverse('login')}?next={request.path}",
        "maxCodeBytes": MAX_CODE_BYTES,
        "draftUrl": reverse("challenge-draft", args=[challenge.slug]) if request.user.is_authenticated else None,
    }
    return render(
        request,
        "challenges/detail.html",
        {
            "challenge": challenge,
            "version": version,
            "statement_html": markdown_to_html(version.statement),
            "starter_code": version.starter_code,
            # The editor opens the server's draft (any device, any version of the challenge), else the starter.
            "editor_code": draft.code if draft is not None else version.starter_code,
            "draft_changed": draft.changed if draft is not None else (),
            "given": selectors.given_modules(version),
            "history": history,
            "typical": typical,
            "learn": access,
            "page_config": page_config,
        },
    )


def _visible_challenge(request: HttpRequest, slug: str) -> Challenge:
    """The challenge ``slug`` as this user may see it, with a version to show; NotFound otherwise."""
    challenge = selectors.challenge_get_visible(slug, user=request.user)
    if challenge is None or challenge.current_version is None:
        raise NotFound(f"No challenge {slug!r}.")
    return challenge


@login_required
@require_GET
def learn_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The challenge's lesson and its common mistakes, once the user has solved it or given up (web/challenges/learn.py)."""
    challenge = _visible_challenge(request, slug)
    access = learn.learn_access(request.user, challenge)
    if not access.open:
        raise Forbidden(access.reason)
    lesson = learn.challenge_lesson(challenge)
    return render(
        request,
        "challenges/learn.html",
        {
            "challenge": challenge,
            "access": access,
            "lesson_html": markdown_to_html(lesson.text) if lesson.text else None,
            "mistakes": lesson.mistakes,
            "reference": lesson.reference,
        },
    )


@login_required
@require_POST
def give_up(request: HttpRequest, slug: str) -> HttpResponse:
    """Give up on a challenge (recorded, shown on progress) and go to its Learn page."""
    challenge = _visible_challenge(request, slug)
    learn.give_up(request.user, challenge)
    return redirect("challenge-learn", slug=challenge.slug)
