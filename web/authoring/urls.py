"""Authoring URLs, mounted at /author/ (coaches only; see views)."""

from django.urls import URLPattern, path

from web.authoring import views

urlpatterns: list[URLPattern] = [
    path("", views.home, name="author-home"),
    path("new/", views.create, name="author-create"),
    path("import/", views.import_package, name="author-import"),
    path("preview", views.preview, name="author-preview"),
    path("validations/<int:pk>.json", views.validation_status, name="author-validation"),
    path("<slug:slug>/", views.edit, name="author-edit"),
    path("<slug:slug>/unpublish", views.unpublish, name="author-unpublish"),
    path("<slug:slug>/coverage", views.coverage, name="author-coverage"),
    path("<slug:slug>/versions/<str:version>.zip", views.export, name="author-export"),
    path("<slug:slug>/versions/<str:version>/validate", views.validate, name="author-validate"),
    path("<slug:slug>/versions/<str:version>/publish", views.publish, name="author-publish"),
]
