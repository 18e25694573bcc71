"""Authoring pages: who may open what, the form (errors keep the input), import/export, validate, publish."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from grader.package_load import package_from_files
from tests.web.test_authoring_services import CHECKS, fixture_draft, validated, zip_of
from web.authoring import services
from web.authoring.draft import Draft, draft_to_files
from web.authoring.forms import form_initial, hint_inputs_from_draft
from web.authoring.models import RunStatus, ValidationRun
from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.storage import files_decode

from .conftest import reads_no_package_files


def form_data(draft: Draft) -> dict[str, Any]:
    data: dict[str, Any] = {k: v for k, v in form_initial(draft).items()}
    hints = hint_inputs_from_draft(draft)
    data.update(
        hint_id=[h.id for h in hints], hint_tier=[h.tier for h in hints], hint_tags=[h.tags for h in hints], hint_text=[h.text for h in hints]
    )
    return data


def authored(coach: User, slug: str = "add-three") -> Challenge:
    return services.challenge_create(user=coach, draft=fixture_draft(slug)).challenge


def all_author_urls(challenge: Challenge) -> list[tuple[str, str]]:
    assert challenge.draft_version is not None
    v = challenge.draft_version.version
    run = validated(challenge.draft_version)
    return [
        ("GET", reverse("author-home")), ("GET", reverse("author-create")), ("POST", reverse("author-create")),
        ("GET", reverse("author-import")), ("POST", reverse("author-import")), ("POST", reverse("author-preview")),
        ("GET", reverse("author-edit", args=[challenge.slug])), ("POST", reverse("author-edit", args=[challenge.slug])),
        ("GET", reverse("author-export", args=[challenge.slug, v])), ("POST", reverse("author-validate", args=[challenge.slug, v])),
        ("GET", reverse("author-validation", args=[run.pk])), ("POST", reverse("author-publish", args=[challenge.slug, v])),
        ("POST", reverse("author-unpublish", args=[challenge.slug])), ("GET", reverse("author-coverage", args=[challenge.slug])),
    ]  # fmt: skip


# --- Permissions ---------------------------------------------------------------------------------------


def test_candidates_get_403_and_anonymous_visitors_the_login_page_everywhere(client: Client, coach: User, user: User) -> None:
    challenge = authored(coach)
    urls = all_author_urls(challenge)
    for method, url in urls:
        response = client.generic(method, url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), (method, url)
    client.force_login(user)
    for method, url in urls:
        assert client.generic(method, url).status_code == 403, (method, url)
    challenge.refresh_from_db()
    assert challenge.current_version is None and ChallengeVersion.objects.filter(challenge=challenge).count() == 1


def test_a_coach_cannot_open_another_coachs_challenge_but_staff_can(client: Client, coach: User, other_coach: User) -> None:
    challenge = authored(coach)
    client.force_login(other_coach)
    for method, url in all_author_urls(challenge)[6:]:
        assert client.generic(method, url).status_code == 404, (method, url)
    home = client.get(reverse("author-home")).content.decode()
    assert 'data-slug="add-three"' not in home
    staff = User.objects.create_user("sam", password="pw-sam-123456", is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("author-edit", args=["add-three"])).status_code == 200
    assert 'data-slug="add-three"' in client.get(reverse("author-home")).content.decode()


def test_repository_packages_are_listed_read_only_and_exported_to_staff_only(coach_client: Client, challenge: Challenge) -> None:
    home = coach_client.get(reverse("author-home")).content.decode()
    repo = home[home.index('id="repository"') :]
    assert 'data-slug="add-two"' in repo and f'href="{reverse("author-edit", args=["add-two"])}"' not in home
    assert coach_client.get(reverse("author-edit", args=["add-two"])).status_code == 404
    assert challenge.current_version is not None
    export = reverse("author-export", args=["add-two", challenge.current_version.version])
    # A coach: no link, and 404 (its reference and hidden probes are the catalogue's answers).
    assert export not in repo
    assert coach_client.get(export).status_code == 404
    staff = User.objects.create_user("ops-export", password="pw-ops-1234567", is_staff=True)
    staff_client = Client()
    staff_client.force_login(staff)
    assert export in staff_client.get(reverse("author-home")).content.decode()
    zipped = staff_client.get(export)
    assert zipped.status_code == 200 and zipped["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(zipped.content)).namelist()
    assert "add-two/challenge.toml" in names and "add-two/reference/solution.py" in names


def test_the_menu_links_to_authoring_for_coaches_only(client: Client, coach: User, user: User) -> None:
    client.force_login(coach)
    assert 'id="author-link"' in client.get(reverse("catalogue")).content.decode()
    client.force_login(user)
    assert 'id="author-link"' not in client.get(reverse("catalogue")).content.decode()


# --- The form --------------------------------------------------------------------------------------------


def test_the_new_challenge_form_starts_from_a_working_skeleton(coach_client: Client) -> None:
    page = coach_client.get(reverse("author-create")).content.decode()
    assert "@probe(category=" in page and "def solve(x)" in page and 'name="hint_id" value="basics"' in page


def test_create_then_edit_saves_versions_and_shows_them(coach_client: Client, coach: User) -> None:
    response = coach_client.post(reverse("author-create"), form_data(fixture_draft()))
    assert response.status_code == 302 and response["Location"] == reverse("author-edit", args=["add-three"])
    challenge = Challenge.objects.get(slug="add-three")
    assert challenge.author == coach and not challenge.published
    # A draft is nobody's challenge page, not even its author's, until it is published.
    assert coach_client.get(reverse("challenge-detail", args=["add-three"])).status_code == 404
    page = coach_client.get(response["Location"]).content.decode()
    assert 'value="Add two integers"' in page and "def add(a, b):" in page and 'id="validate"' in page

    unchanged = coach_client.post(response["Location"], form_data(fixture_draft()), follow=True)
    assert "No changes" in unchanged.content.decode() and challenge.versions.count() == 1
    data = form_data(fixture_draft(title="Add three integers"))
    data["hint_id"].append("extra")
    data["hint_tier"].append("2")
    data["hint_tags"].append("sum, signs")
    data["hint_text"].append("Two\r\nlines")
    data["slug"] = "renamed-by-a-crafted-post"  # ignored: the slug is the challenge's identity
    saved = coach_client.post(response["Location"], data, follow=True).content.decode()
    assert "Saved version" in saved and challenge.versions.count() == 2
    challenge.refresh_from_db()
    assert challenge.draft_version is not None
    package = package_from_files(files_decode(challenge.draft_version.files))
    assert package.slug == "add-three" and package.title == "Add three integers"
    assert package.hints[-1].text == "Two\nlines" and package.hints[-1].tags == ("sum", "signs") and package.hints[-1].tier == 2


def test_a_refused_save_shows_the_graders_message_and_keeps_what_was_typed(coach_client: Client, coach: User) -> None:
    authored(coach)
    data = form_data(fixture_draft(title="My unsaved title"))
    data["hidden_probes"] = "# my unsaved probe notes\nx = 1\n"
    response = coach_client.post(reverse("author-edit", args=["add-three"]), data)
    page = response.content.decode()
    assert response.status_code == 400
    assert 'id="form-errors"' in page and "probes/hidden.py" in page and "declares no probes" in page
    assert "My unsaved title" in page and "# my unsaved probe notes" in page
    assert Challenge.objects.get(slug="add-three").versions.count() == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"slug": "Not A Slug"}, "lowercase letters and digits"),
        ({"probe_seconds": "soon"}, "Enter a number"),
        ({"memory_mb": "10"}, "greater than or equal to 64"),
        ({"entry": "solution.txt"}, "Python file name"),
        ({"hint_tier": ["7"]}, "Hint 1: tier must be 1, 2 or 3"),
        ({"runtime": "cobol"}, "Select a valid choice"),
    ],
)
def test_bad_fields_are_named(coach_client: Client, change: dict[str, Any], message: str) -> None:
    data = {**form_data(fixture_draft()), **change}
    response = coach_client.post(reverse("author-create"), data)
    assert response.status_code == 400 and message in response.content.decode()
    assert not Challenge.objects.filter(slug="add-three").exists()


def test_a_slug_clash_with_a_repository_package_is_refused_on_create(coach_client: Client, challenge: Challenge) -> None:
    response = coach_client.post(reverse("author-create"), form_data(fixture_draft("add-two", title="Mine")))
    assert response.status_code == 400 and "belongs to a repository package" in response.content.decode()
    assert Challenge.objects.get(slug="add-two").title != "Mine"


def test_preview_renders_markdown_with_the_challenge_pages_sanitiser(coach_client: Client) -> None:
    text = "# Hello\n\n**bold** <script>window.__xss = 1</script> <img src=x onerror=alert(1)>\n"
    data = coach_client.post(reverse("author-preview"), {"text": text}).json()
    assert "<h1>Hello</h1>" in data["html"] and "<strong>bold</strong>" in data["html"]
    assert "<script>" not in data["html"] and "onerror" not in data["html"]


# --- Import and export --------------------------------------------------------------------------------------


def test_import_then_export_round_trips_the_version(coach_client: Client) -> None:
    upload = SimpleUploadedFile("pkg.zip", zip_of(fixture_draft()), content_type="application/zip")
    response = coach_client.post(reverse("author-import"), {"package": upload})
    assert response.status_code == 302
    challenge = Challenge.objects.get(slug="add-three")
    assert challenge.draft_version is not None
    exported = coach_client.get(reverse("author-export", args=["add-three", challenge.draft_version.version])).content
    again = coach_client.post(reverse("author-import"), {"package": SimpleUploadedFile("again.zip", exported)}, follow=True)
    assert "Already stored" in again.content.decode() and challenge.versions.count() == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a zip at all", "not a zip file"),
        (zip_of(fixture_draft(), {"../../etc/evil": b"x"}), "points outside the package"),
        (zip_of(fixture_draft("add-two")), "belongs to a repository package"),
        (zip_of(Draft(**{**fixture_draft().__dict__, "title": ""})), "title&#x27;: must be a non-empty string"),
    ],
)
def test_import_refusals_are_shown_on_the_page(coach_client: Client, challenge: Challenge, content: bytes, message: str) -> None:
    response = coach_client.post(reverse("author-import"), {"package": SimpleUploadedFile("p.zip", content)})
    assert response.status_code == 400 and message in response.content.decode()
    assert not Challenge.objects.filter(slug="add-three").exists()


def test_import_without_a_file_says_so(coach_client: Client) -> None:
    response = coach_client.post(reverse("author-import"), {})
    assert response.status_code == 400 and "Choose a .zip file" in response.content.decode()


# --- Validate and publish ------------------------------------------------------------------------------------


@pytest.mark.sandbox
def test_validate_then_poll_then_publish_then_a_candidate_opens_it(
    client: Client, coach: User, user: User, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    challenge = authored(coach)
    assert challenge.draft_version is not None
    version = challenge.draft_version.version
    client.force_login(coach)
    refused = client.post(reverse("author-publish", args=["add-three", version]), follow=True)
    assert "has not been validated" in refused.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(reverse("author-validate", args=["add-three", version]), HTTP_ACCEPT="application/json")
    assert queued.status_code == 202
    run = client.get(queued.json()["url"]).json()
    assert run["status"] == RunStatus.DONE and run["passed"] is True, run
    assert any("reference, public: 100%" in line for line in run["lines"])
    published = client.post(reverse("author-publish", args=["add-three", version]), follow=True)
    assert "Published version" in published.content.decode()
    assert 'data-state="published"' in published.content.decode()

    client.force_login(user)
    assert "add-three" in client.get(reverse("catalogue")).content.decode()
    assert client.get(reverse("challenge-detail", args=["add-three"])).status_code == 200

    client.force_login(coach)
    client.post(reverse("author-unpublish", args=["add-three"]))
    client.force_login(user)
    assert client.get(reverse("challenge-detail", args=["add-three"])).status_code == 404


def test_a_coach_may_validate_a_package_with_custom_checks(coach_client: Client, coach: User, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services, "_enqueue_validation", lambda run_id, runtime: None)
    outcome = services.package_import(user=coach, data=zip_of(fixture_draft(), {"probes/checks.py": CHECKS}))
    url = reverse("author-validate", args=["add-three", outcome.version.version])
    answer = coach_client.post(url, HTTP_ACCEPT="application/json")
    assert answer.status_code == 202, answer.content
    assert "probes/checks.py" not in coach_client.get(reverse("author-edit", args=["add-three"])).content.decode()


def test_the_edit_page_keeps_files_the_form_does_not_show(coach_client: Client, coach: User) -> None:
    files = {**draft_to_files(fixture_draft()), "solutions/zero.py": b"def add(a, b):\n    return 0\n"}
    services.package_import(user=coach, data=zip_of(fixture_draft(), {"solutions/zero.py": files["solutions/zero.py"]}))
    coach_client.post(reverse("author-edit", args=["add-three"]), form_data(fixture_draft(title="Renamed")))
    challenge = Challenge.objects.get(slug="add-three")
    assert challenge.draft_version is not None
    assert files_decode(challenge.draft_version.files)["solutions/zero.py"] == files["solutions/zero.py"]


def test_polling_a_validation_reads_no_package_files(coach_client: Client, coach: User) -> None:
    challenge = authored(coach)
    assert challenge.draft_version is not None
    run = ValidationRun.objects.create(version=challenge.draft_version, requested_by=coach)
    # The session, the user, the coach check, the run with its version and challenge.
    with reads_no_package_files(max_queries=5):
        data = coach_client.get(reverse("author-validation", args=[run.pk])).json()
    assert (data["status"], data["version"]) == (RunStatus.QUEUED, challenge.draft_version.version)


# --- Coverage tables -----------------------------------------------------------------------------------

COVERAGE = """
[[entry]]
id = "sum"
kind = "rule"
statement = "returns `a + b`"
probes = ["positives", "negatives"]

[[entry]]
id = "signs"
kind = "input"
statement = "Add two integers"
probes = ["negatives"]
"""


def test_a_repository_packages_coverage_table_is_shown_to_any_coach_with_its_problems(coach_client: Client, package_root: Any) -> None:
    from web.challenges.services import challenge_sync_from_dir

    folder = package_root / "basics" / "add-two"
    (folder / "coverage.toml").write_text(COVERAGE.replace('probes = ["negatives"]', 'probes = ["negatives", "zeros"]'))
    assert challenge_sync_from_dir(package_root).ok
    home = coach_client.get(reverse("author-home")).content.decode()
    assert f'href="{reverse("author-coverage", args=["add-two"])}"' in home
    page = coach_client.get(reverse("author-coverage", args=["add-two"])).content.decode()
    assert 'data-entry="sum" data-kind="rule"' in page and 'data-entry="signs" data-kind="input"' in page
    assert "returns `a + b`" in page and 'class="probe-hidden"' in page
    problems = page[page.index('id="coverage-problems"') :]
    assert "no probe is called zeros" in problems and 'class="probe-unknown"' in page


def test_a_package_without_a_table_says_how_to_add_one_and_unknown_slugs_are_404(coach_client: Client, challenge: Challenge) -> None:
    page = coach_client.get(reverse("author-coverage", args=["add-two"])).content.decode()
    assert 'id="coverage-missing"' in page and "coverage.toml" in page
    assert coach_client.get(reverse("author-coverage", args=["no-such"])).status_code == 404
