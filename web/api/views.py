"""API views: check access, call the same selectors, services and presenters as the pages, answer JSON.

Every answer is JSON; every error is ``{"error": message}`` with the message
meant for the person: views raise, and the exception handler
(web.api.errors) answers through the table the pages use (web.errors). Reading challenges is open like the
catalogue; submitting and polling need a user (token or session). Another
user's submission and a missing one are the same 404. Writes through a
session need the CSRF token (DRF's SessionAuthentication checks it); token
callers have no cookie to forge.

A mock interview's scorecard (recommendation, notes, rubric and its cited
evidence) is for the interview's coach or staff; anyone else gets a 404.

A submission's answer names the API's own URLs to poll it, reveal a hint it
unlocked and regrade it when the platform failed to grade it
(web.submissions.presenters.API_ROUTES); the last two answer the submission
again, like the page's endpoints.
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from web.api import presenters
from web.api.serializers import (
    ChallengeDetailSerializer,
    ChallengeSummarySerializer,
    ErrorSerializer,
    HistoryPageSerializer,
    ProgressSerializer,
    ScorecardSerializer,
    SubmissionCreatedSerializer,
    SubmissionCreateSerializer,
    SubmissionSerializer,
)
from web.challenges.selectors import challenge_get_visible, challenge_list
from web.errors import NotFound
from web.interviews.evidence import scorecard_export
from web.interviews.selectors import interview_get_for_coach
from web.submissions import progress
from web.submissions.models import Kind, Submission, Verdict
from web.submissions.presenters import API_ROUTES, submission_payload
from web.submissions.selectors import hint_revealed_ids, submission_get_owned
from web.submissions.services.cancel import submission_cancel
from web.submissions.services.intake import submission_create
from web.submissions.services.regrade import submission_regrade_own
from web.submissions.services.reveal import hint_reveal


def _owned(request: Request, pk: int) -> Submission:
    submission = submission_get_owned(pk, request.user)
    if submission is None:
        raise NotFound("No such submission.")
    return submission


class ChallengeListView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses={200: ChallengeSummarySerializer(many=True)}, summary="Challenges open to the caller, in catalogue order")
    def get(self, request: Request) -> Response:
        challenges = challenge_list(user=request.user).select_related("current_version").defer("current_version__files")
        return Response([presenters.challenge_summary(c) for c in challenges])


class ChallengeDetailView(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses={200: ChallengeDetailSerializer, 404: ErrorSerializer}, summary="One challenge's public parts")
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get_visible(slug, user=request.user)
        if challenge is None or challenge.current_version is None:
            raise NotFound(f"No challenge {slug!r}.")
        return Response(presenters.challenge_detail(challenge, request.user))


class ProgressView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: ProgressSerializer}, summary="Your progress: per track and challenge, state, best score, submits, last attempt")
    def get(self, request: Request) -> Response:
        overview = progress.progress_for(request.user)
        return Response(presenters.progress_payload(overview, progress.score_series(request.user)))


HISTORY_PAGE_SIZE = 50


class HistoryView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter("challenge", OpenApiTypes.STR, description="Only this challenge (its slug)."),
            OpenApiParameter("track", OpenApiTypes.STR, description="Only this track (its slug)."),
            OpenApiParameter("kind", OpenApiTypes.STR, enum=list(Kind.values), description="Only Runs or only Submits."),
            OpenApiParameter("verdict", OpenApiTypes.STR, enum=list(Verdict.values), description="Only graded submissions with this verdict."),
            OpenApiParameter("page", OpenApiTypes.INT, description=f"1 (the newest {HISTORY_PAGE_SIZE}) and up."),
        ],
        operation_id="submissions_list",
        responses={200: HistoryPageSerializer, 400: ErrorSerializer},
        summary="Your submissions, newest first, filtered and paginated",
    )
    def get(self, request: Request) -> Response:
        try:
            filters = progress.history_filters(request.query_params, strict=True)
        except progress.FilterError as exc:
            raise ValidationError(str(exc)) from exc
        paginator = Paginator(progress.submission_history_all(request.user, filters), HISTORY_PAGE_SIZE)
        page = paginator.get_page(request.query_params.get("page"))

        def link(number: int) -> str:
            params = request.query_params.copy()
            params["page"] = str(number)
            return f"{reverse('api-submissions')}?{params.urlencode()}"

        return Response(
            {
                "count": paginator.count,
                "page": page.number,
                "pages": paginator.num_pages,
                "next": link(page.next_page_number()) if page.has_next() else None,
                "previous": link(page.previous_page_number()) if page.has_previous() else None,
                "results": [presenters.history_row(s) for s in page.object_list],
            }
        )


class SubmitView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=SubmissionCreateSerializer,
        responses={202: SubmissionCreatedSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
        summary="Run (public probes) or submit (hidden probes, scored) code; poll the url it answers",
    )
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get_visible(slug, user=request.user)
        if challenge is None:
            raise NotFound(f"No challenge {slug!r}.")
        form = SubmissionCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(form.validated_data)
        submission = submission_create(request.user, challenge, data["code"], data["kind"])
        return Response(
            {"id": submission.pk, "kind": submission.kind, "status": submission.status, "url": reverse("api-submission", args=[submission.pk])},
            status=status.HTTP_202_ACCEPTED,
        )


class SubmissionView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={200: SubmissionSerializer, 404: ErrorSerializer}, summary="One of your submissions: status, then verdict, score, probes, hints"
    )
    def get(self, request: Request, pk: int) -> Response:
        submission = _owned(request, pk)
        return Response(submission_payload(submission, hint_revealed_ids(request.user, submission.challenge_id), API_ROUTES))


class HintRevealView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={200: SubmissionSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
        summary="Show a hint this submission unlocked (its lower tiers first); answers the submission again",
    )
    def post(self, request: Request, pk: int, hint_id: str) -> Response:
        submission = _owned(request, pk)
        hint_reveal(request.user, submission, hint_id)
        # The whole result again: revealing one hint may make the next revealable.
        return Response(submission_payload(submission, hint_revealed_ids(request.user, submission.challenge_id), API_ROUTES))


class RegradeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={202: SubmissionSerializer, 404: ErrorSerializer, 409: ErrorSerializer, 429: ErrorSerializer},
        summary="Grade again a submission the platform failed to grade (internal_error); poll its url",
    )
    def post(self, request: Request, pk: int) -> Response:
        submission = submission_regrade_own(request.user, _owned(request, pk))
        revealed = hint_revealed_ids(request.user, submission.challenge_id)
        return Response(submission_payload(submission, revealed, API_ROUTES), status=status.HTTP_202_ACCEPTED)


class CancelView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={200: SubmissionSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
        summary="Cancel your queued or running submission: a queued one ends at once, a running one within seconds",
    )
    def post(self, request: Request, pk: int) -> Response:
        submission = submission_cancel(request.user, _owned(request, pk))
        revealed = hint_revealed_ids(request.user, submission.challenge_id)
        return Response(submission_payload(submission, revealed, API_ROUTES))


class InterviewScorecardView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={200: ScorecardSerializer, 404: ErrorSerializer},
        summary="A mock interview's scorecard: recommendation, notes, rubric with the moments each row cites (its interviewer only)",
    )
    def get(self, request: Request, interview_id: int) -> Response:
        # The candidate, other coaches and a missing id get the same 404.
        interview = interview_get_for_coach(interview_id, request.user)
        if interview is None:
            raise NotFound("No such interview.")
        return Response(scorecard_export(interview))
