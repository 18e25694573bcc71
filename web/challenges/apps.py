"""App config for the challenges catalogue."""

from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "web.challenges"
    label = "challenges"
    verbose_name = "Challenges"
