"""App config for authoring."""

from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    name = "web.authoring"
    label = "authoring"
    verbose_name = "Authoring"
