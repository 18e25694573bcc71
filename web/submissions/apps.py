"""App config for submissions and grading."""

from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "web.submissions"
    label = "submissions"
    verbose_name = "Submissions"
