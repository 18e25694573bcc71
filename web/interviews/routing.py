"""The interview's websocket routes (served by web/config/asgi.py beside the pages)."""

from django.urls import path

from web.interviews import consumers

websocket_urlpatterns = [
    path("ws/interviews/join/<str:token>/keys/", consumers.CandidateKeysConsumer.as_asgi(), name="interview-keys-candidate"),
    path("ws/interviews/<int:interview_id>/keys/", consumers.WatchKeysConsumer.as_asgi(), name="interview-keys-watch"),
]
