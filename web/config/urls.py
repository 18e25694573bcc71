"""URL map: catalogue and challenge pages, their JSON endpoints, the candidate's progress and submissions,
coach pages, authoring (/author/), mock interviews (/interviews/), accounts, the API (/api/v1/), admin."""

from django.contrib import admin
from django.urls import include, path

from web.challenges import views as challenge_views
from web.coach import views as coach_views
from web.config import health
from web.submissions import pages as submission_pages
from web.submissions import views as submission_views

urlpatterns = [
    path("", challenge_views.catalogue, name="catalogue"),
    path("tracks/<slug:slug>/", challenge_views.track_detail, name="track-detail"),
    path("challenges/<slug:slug>/", challenge_views.challenge_detail, name="challenge-detail"),
    path("challenges/<slug:slug>/learn/", challenge_views.learn_page, name="challenge-learn"),
    path("challenges/<slug:slug>/give-up", challenge_views.give_up, name="challenge-give-up"),
    path("challenges/<slug:slug>/run", submission_views.challenge_run, name="challenge-run"),
    path("challenges/<slug:slug>/submit", submission_views.challenge_submit, name="challenge-submit"),
    path("challenges/<slug:slug>/draft", submission_views.challenge_draft, name="challenge-draft"),
    path("progress/", submission_pages.progress_page, name="progress"),
    path("submissions/", submission_pages.history_page, name="submission-list"),
    path("submissions/<int:pk>/", submission_pages.submission_page, name="submission-detail"),
    path("submissions/<int:pk>.json", submission_views.submission_status, name="submission-status"),
    path(
        "submissions/<int:pk>/hints/<str:hint_id>/reveal",
        submission_views.submission_hint_reveal,
        name="submission-hint-reveal",
    ),
    path("author/", include("web.authoring.urls")),
    path("interviews/", include("web.interviews.urls")),
    path("coach/grading/", coach_views.grading_dashboard, name="coach-grading"),
    path("coach/regrade/", coach_views.regrade, name="coach-regrade"),
    path("submissions/<int:pk>/regrade", submission_views.submission_regrade, name="submission-regrade"),
    path("submissions/<int:pk>/cancel", submission_views.submission_cancel, name="submission-cancel"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/", include("web.accounts.urls")),
    path("api/v1/", include("web.api.urls")),
    path("admin/", admin.site.urls),
]
