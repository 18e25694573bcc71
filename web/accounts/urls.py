"""Account URLs: our throttled login, Django's logout, our sign-up, password reset by email, the API token page."""

from django.contrib.auth import views as auth_views
from django.urls import path

from web.accounts import views

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
    path("token/", views.api_token, name="api-token"),
    # Forgot a password: ask for a link by email, follow it, choose a new password (Django's tokens, one use each).
    path("password-reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("password-reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(), name="password_reset_confirm"),
    path("reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
]
