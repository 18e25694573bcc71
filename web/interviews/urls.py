"""Mock interview URLs, mounted at /interviews/."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
