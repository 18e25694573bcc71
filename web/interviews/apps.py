"""App config for interviews."""

from django.apps import AppConfig


class InterviewsConfig(AppConfig):
    name = "web.interviews"
    label = "interviews"
    verbose_name = "Mock interviews"

    def ready(self) -> None:
        # Hints switched off by a session's settings: the submissions app asks before every reveal.
        from web.interviews.session_settings import hint_reveal_refusal
        from web.submissions.services.reveal import reveal_guard_register

        reveal_guard_register(hint_reveal_refusal)
