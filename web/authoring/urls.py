"""Authoring URLs, mounted at /author/ (coaches only)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
