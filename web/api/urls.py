"""API URLs, mounted at /api/v1/: challenges, submit, your progress and submissions, poll, reveal a hint, regrade, and the OpenAPI schema."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView

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
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
]
