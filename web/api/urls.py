"""API URLs, mounted at /api/v1/: challenges, submit, your progress and submissions, poll, reveal a hint, regrade,
a mock interview's scorecard, the OpenAPI schema and its Swagger UI page."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from web.api import views

urlpatterns = [
    path("challenges/", views.ChallengeListView.as_view(), name="api-challenges"),
    path("challenges/<slug:slug>/", views.ChallengeDetailView.as_view(), name="api-challenge"),
    path("challenges/<slug:slug>/submissions/", views.SubmitView.as_view(), name="api-submit"),
    path("progress/", views.ProgressView.as_view(), name="api-progress"),
    path("submissions/", views.HistoryView.as_view(), name="api-submissions"),
    path("submissions/<int:pk>/", views.SubmissionView.as_view(), name="api-submission"),
    path("submissions/<int:pk>/hints/<str:hint_id>/reveal/", views.HintRevealView.as_view(), name="api-hint-reveal"),
    path("submissions/<int:pk>/regrade/", views.RegradeView.as_view(), name="api-regrade"),
    path("submissions/<int:pk>/cancel/", views.CancelView.as_view(), name="api-cancel"),
    path("interviews/<int:interview_id>/scorecard", views.InterviewScorecardView.as_view(), name="api-interview-scorecard"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script from a URL of its own (?script), which the
    # Content-Security-Policy's script-src 'self' allows; the plain view's inline script would be refused.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/swagger_ui.html", title="API · GradPrep"),
        name="api-docs",
    ),
]
