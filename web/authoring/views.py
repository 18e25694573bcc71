"""Authoring pages (/author/): check access, call a service or selector, respond.

Every view is for coaches (web.accounts.roles.coach_required, outermost so
that a candidate gets 403 whatever the method; anonymous visitors go to the
login page); which challenge a coach
may open is decided by web.authoring.selectors (404 otherwise). A refused
save re-renders the form with everything the coach typed and the grader's
message next to it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from grader.errors import GraderError
from web.accounts.roles import coach_required
from web.authoring import selectors, services
from web.authoring.draft import Draft, draft_from_package, new_draft
from web.authoring.forms import (
    ChallengeForm,
    HintInput,
    ImportForm,
    draft_from_form,
    form_initial,
    hint_inputs_from_draft,
    hint_inputs_from_post,
    hints_clean,
)
from web.authoring.models import ValidationRun
from web.authoring.zipfiles import MAX_ZIP_BYTES, write_package_zip
from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.rendering import markdown_to_html
from web.challenges.services import challenge_package
from web.challenges.storage import files_decode
from web.config.uploads import upload_stopped
from web.errors import NotFound, Refused

MAX_PREVIEW_CHARS = 200_000
CODE_FIELDS = (
    ("starter", "Starter code (starter/<entry>): what the candidate starts from"),
    ("reference", "Reference solution (reference/<entry>): never shown to candidates"),
    ("public_probes", "Public probes (probes/public.py): Run shows their inputs and expected values"),
    ("hidden_probes", "Hidden probes (probes/hidden.py): Submit, the score"),
    ("common_probes", "Common probe code (probes/common.py, optional): imported as probe_common"),
)


@coach_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    rows, repository = selectors.authoring_rows(request.user)  # type: ignore[arg-type]
    return render(request, "authoring/home.html", {"rows": rows, "repository": repository})


def _form_page(
    request: HttpRequest,
    form: ChallengeForm,
    hints: list[HintInput],
    *,
    challenge: Challenge | None,
    errors: list[str],
    status: int = 200,
) -> HttpResponse:
    draft = challenge.draft_version if challenge else None
    run = selectors.latest_run(draft) if draft else None
    config: dict[str, Any] = {"previewUrl": reverse("author-preview")}
    if challenge and draft:
        config.update(
            validateUrl=reverse("author-validate", args=[challenge.slug, draft.version]),
            runUrl=reverse("author-validation", args=[run.pk]) if run else None,
            run=run_as_data(run) if run else None,
        )
    return render(
        request,
        "authoring/edit.html",
        {
            "form": form,
            "code_fields": [(form[name], legend) for name, legend in CODE_FIELDS],
            "hints": hints or [HintInput()],
            "challenge": challenge,
            "draft": draft,
            "run": run,
            "versions": selectors.version_rows(challenge) if challenge else [],
            "errors": errors,
            "tracks": selectors.track_slugs(),
            "page_config": config,
        },
        status=status,
    )


def _draft_from_request(request: HttpRequest, form: ChallengeForm) -> tuple[Draft | None, list[HintInput], list[str]]:
    hint_inputs = hint_inputs_from_post(request.POST)
    hints, errors = hints_clean(hint_inputs)
    if not form.is_valid() or errors:
        return None, hint_inputs, errors
    return draft_from_form(form.cleaned_data, hints), hint_inputs, []


@coach_required
@require_http_methods(["GET", "POST"])
def create(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        draft = new_draft(track=request.GET.get("track", ""))
        return _form_page(request, ChallengeForm(initial=form_initial(draft)), hint_inputs_from_draft(draft), challenge=None, errors=[])
    form = ChallengeForm(request.POST)
    draft, hint_inputs, errors = _draft_from_request(request, form)
    if draft is None:
        return _form_page(request, form, hint_inputs, challenge=None, errors=errors, status=400)
    try:
        outcome = services.challenge_create(user=request.user, draft=draft)  # type: ignore[arg-type]
    except services.AuthoringError as exc:
        return _form_page(request, form, hint_inputs, challenge=None, errors=[str(exc)], status=400)
    messages.success(request, f"Created {outcome.challenge.slug}: version {outcome.version.short_version} (a draft; validate, then publish).")
    return redirect("author-edit", slug=outcome.challenge.slug)


def _editable(request: HttpRequest, slug: str) -> Challenge:
    challenge = selectors.challenge_for_edit(request.user, slug)  # type: ignore[arg-type]
    if challenge is None or challenge.draft_version is None:
        raise NotFound(f"No challenge {slug!r} that you can edit.")
    return challenge


@coach_required
@require_http_methods(["GET", "POST"])
def edit(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = _editable(request, slug)
    if request.method == "GET":
        assert challenge.draft_version is not None
        draft = draft_from_package(challenge_package(challenge.draft_version))
        return _form_page(request, ChallengeForm(initial=form_initial(draft)), hint_inputs_from_draft(draft), challenge=challenge, errors=[])
    # The slug is the challenge's identity, whatever the request says.
    data = request.POST.copy()
    data["slug"] = challenge.slug
    form = ChallengeForm(data)
    draft, hint_inputs, errors = _draft_from_request(request, form)
    if draft is None:
        return _form_page(request, form, hint_inputs, challenge=challenge, errors=errors, status=400)
    try:
        outcome = services.challenge_save(user=request.user, challenge=challenge, draft=draft)  # type: ignore[arg-type]
    except services.AuthoringError as exc:
        return _form_page(request, form, hint_inputs, challenge=challenge, errors=[str(exc)], status=400)
    if outcome.created:
        messages.success(request, f"Saved version {outcome.version.short_version}.")
    else:
        messages.info(request, f"No changes: still version {outcome.version.short_version}.")
    return redirect("author-edit", slug=challenge.slug)


@coach_required
@require_POST
def preview(request: HttpRequest) -> JsonResponse:
    """The statement as the challenge page will render it (same Markdown and sanitiser)."""
    text = request.POST.get("text", "")
    if len(text) > MAX_PREVIEW_CHARS:
        raise Refused(f"The statement is longer than {MAX_PREVIEW_CHARS:,} characters.")
    return JsonResponse({"html": str(markdown_to_html(text))})


@coach_required
@require_http_methods(["GET", "POST"])
def import_package(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "authoring/import.html", {"form": ImportForm(), "max_bytes": MAX_ZIP_BYTES})
    form = ImportForm(request.POST, request.FILES)
    error = None
    if (cap := upload_stopped(request)) is not None:
        error = f"The upload passed {cap:,} bytes and was stopped; the limit for a zip is {MAX_ZIP_BYTES:,} bytes."
    elif not form.is_valid():
        error = "Choose a .zip file to upload."
    else:
        upload = form.cleaned_data["package"]
        if upload.size > MAX_ZIP_BYTES:
            error = f"The zip is {upload.size:,} bytes; the limit is {MAX_ZIP_BYTES:,} bytes."
        else:
            try:
                outcome = services.package_import(user=request.user, data=upload.read())  # type: ignore[arg-type]
            except services.AuthoringError as exc:
                error = str(exc)
    if error is not None:
        return render(request, "authoring/import.html", {"form": form, "error": error, "max_bytes": MAX_ZIP_BYTES}, status=400)
    verb = "Imported" if outcome.created else "Already stored:"
    messages.success(request, f"{verb} {outcome.challenge.slug} version {outcome.version.short_version}.")
    return redirect("author-edit", slug=outcome.challenge.slug)


def _version(request: HttpRequest, slug: str, version: str, *, for_export: bool = False) -> tuple[Challenge, ChallengeVersion]:
    user = request.user
    challenge = selectors.challenge_for_export(user, slug) if for_export else selectors.challenge_for_edit(user, slug)  # type: ignore[arg-type]
    found = selectors.version_get(challenge, version) if challenge else None
    if challenge is None or found is None:
        raise NotFound("No such version.")
    return challenge, found


@coach_required
@require_GET
def coverage(request: HttpRequest, slug: str) -> HttpResponse:
    """The package's coverage table: each rule and input class of its statement with the probes that test it."""
    challenge = selectors.challenge_for_coverage(request.user, slug)  # type: ignore[arg-type]
    version = (challenge.draft_version or challenge.current_version) if challenge else None
    if challenge is None or version is None:
        raise NotFound(f"No challenge {slug!r} whose coverage you can read.")
    view = selectors.coverage_view(version)
    return render(request, "authoring/coverage.html", {"challenge": challenge, "coverage": view})


@coach_required
@require_GET
def export(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    challenge, found = _version(request, slug, version, for_export=True)
    data = write_package_zip(files_decode(found.files), challenge.slug)
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{challenge.slug}-{found.short_version}.zip"'
    return response


def run_as_data(run: ValidationRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "status": run.status,
        "finished": run.finished,
        "ok": run.ok,
        "passed": run.passed,
        "lines": run.lines,
        "message": run.message,
        "version": run.version.version,
        "seconds": run.seconds,
        "url": reverse("author-validation", args=[run.pk]),
    }


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@coach_required
@require_POST
def validate(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    challenge, found = _version(request, slug, version)
    try:
        run = services.validation_request(user=request.user, version=found)  # type: ignore[arg-type]
    except services.AuthoringError as exc:
        if _wants_json(request):
            raise  # answered as JSON by web/errors.py
        messages.error(request, str(exc))
        return redirect("author-edit", slug=challenge.slug)
    if _wants_json(request):
        return JsonResponse(run_as_data(run), status=202)
    messages.info(request, f"Validation of {found.short_version} queued.")
    return redirect("author-edit", slug=challenge.slug)


@coach_required
@require_GET
def validation_status(request: HttpRequest, pk: int) -> JsonResponse:
    run = selectors.validation_run_for(request.user, pk)  # type: ignore[arg-type]
    if run is None:
        raise NotFound("No such validation run.")
    return JsonResponse(run_as_data(services.validation_run_status(run)))


@coach_required
@require_POST
def publish(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    challenge, found = _version(request, slug, version)
    try:
        services.challenge_publish(user=request.user, challenge=challenge, version=found)  # type: ignore[arg-type]
    except (services.AuthoringError, GraderError) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Published version {found.short_version}: candidates now get it.")
    return redirect("author-edit", slug=challenge.slug)


@coach_required
@require_POST
def unpublish(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = _editable(request, slug)
    services.challenge_unpublish(user=request.user, challenge=challenge)  # type: ignore[arg-type]
    messages.success(request, f"{challenge.slug} is no longer in the catalogue.")
    return redirect("author-edit", slug=challenge.slug)
