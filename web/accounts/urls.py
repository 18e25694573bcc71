"""Account URLs: Django's login and logout views, our sign-up."""

from django.contrib.auth import views as auth_views
from django.urls import path

from web.accounts import views

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
]
