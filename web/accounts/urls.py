"""Account URLs: our throttled login, Django's logout, our sign-up, the API token page."""

from django.contrib.auth import views as auth_views
from django.urls import path

from web.accounts import views

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
    path("token/", views.api_token, name="api-token"),
]
