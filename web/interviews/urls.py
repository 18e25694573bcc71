"""Mock interview URLs, mounted at /interviews/.

Coach pages are addressed by the interview's id (only its coach or staff get
it); the candidate's by the private token (only the invited candidate gets it).
"""

from django.urls import URLPattern, path

from web.interviews import replay_views, views

urlpatterns: list[URLPattern] = [
    path("", views.interview_list, name="interview-list"),
    path("new/", views.interview_create, name="interview-create"),
    path("templates/", views.template_list, name="interview-templates"),
    path("templates/new/", views.template_create, name="interview-template-create"),
    path("templates/<int:template_id>/", views.template_edit, name="interview-template-edit"),
    path("templates/<int:template_id>/delete", views.template_delete, name="interview-template-delete"),
    path("statistics/", views.challenge_statistics, name="interview-statistics"),
    path("mine/", views.interview_mine, name="interview-mine"),
    path("<int:interview_id>/live/", views.interview_live, name="interview-live"),
    path("<int:interview_id>/live.json", views.interview_live_state, name="interview-live-state"),
    path("<int:interview_id>/timeline/<slug:slug>.json", views.interview_timeline, name="interview-timeline"),
    path("<int:interview_id>/assess", views.interview_assess, name="interview-assess"),
    path("<int:interview_id>/moments.json", views.interview_moments, name="interview-moments"),
    path("<int:interview_id>/cite", views.interview_cite, name="interview-cite"),
    path("<int:interview_id>/uncite", views.interview_uncite, name="interview-uncite"),
    path("<int:interview_id>/end", views.interview_end, name="interview-end"),
    path("<int:interview_id>/scorecard/", views.interview_scorecard, name="interview-scorecard"),
    # The interviewer's runs, replay and notes at a moment (replay_views.py).
    path("<int:interview_id>/submissions/<int:pk>/", replay_views.interview_run_detail, name="interview-run-detail"),
    path("<int:interview_id>/submissions/<int:pk>.json", replay_views.interview_run_status, name="interview-run-status"),
    path("<int:interview_id>/replay.json", replay_views.interview_replay, name="interview-replay"),
    path("<int:interview_id>/notes", replay_views.interview_note_add, name="interview-note-add"),
    path("join/<str:token>/", views.interview_candidate, name="interview-candidate"),
    path("join/<str:token>/state.json", views.interview_candidate_state, name="interview-candidate-state"),
    path("join/<str:token>/submissions/<int:pk>.json", views.interview_submission_status, name="interview-submission-status"),
    path("join/<str:token>/submissions/<int:pk>/hints/<str:hint_id>/reveal", views.interview_hint_reveal, name="interview-hint-reveal"),
    path("join/<str:token>/submissions/<int:pk>/regrade", views.interview_submission_regrade, name="interview-submission-regrade"),
    path("join/<str:token>/submissions/<int:pk>/cancel", views.interview_submission_cancel, name="interview-submission-cancel"),
    path("join/<str:token>/focus", replay_views.interview_focus, name="interview-focus"),
    path("join/<str:token>/<slug:slug>/autosave", views.interview_autosave, name="interview-autosave"),
    path("join/<str:token>/<slug:slug>/run", views.interview_run, name="interview-run"),
    path("join/<str:token>/<slug:slug>/submit", views.interview_submit, name="interview-submit"),
]
