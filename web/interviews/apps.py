"""App config for interviews."""

from django.apps import AppConfig


class InterviewsConfig(AppConfig):
    name = "web.interviews"
    label = "interviews"
    verbose_name = "Mock interviews"
