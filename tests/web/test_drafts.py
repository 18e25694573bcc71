"""Drafts kept by the server (web/submissions/services/drafts.py): per user and challenge, across devices and versions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Draft

CODE = "def add(a, b):\n    return a + b  # mine\n"


def save(client: Client, code: str | bytes, slug: str = "add-two") -> Any:
    return client.post(reverse("challenge-draft", args=[slug]), data=code, content_type="text/plain; charset=utf-8", HTTP_ACCEPT="application/json")


def page(client: Client) -> str:
    return client.get(reverse("challenge-detail", args=["add-two"])).content.decode()


def test_a_saved_draft_opens_on_any_device_and_only_for_its_owner(client: Client, user: User, other_user: User, challenge: Challenge) -> None:
    client.force_login(user)
    assert save(client, CODE).status_code == 200
    assert save(client, CODE + "\n# later\n").status_code == 200
    assert Draft.objects.filter(user=user).count() == 1
    other_device = Client()
    other_device.force_login(user)
    assert "# later" in page(other_device)  # the editor's textarea holds the server's draft
    stranger = Client()
    stranger.force_login(other_user)
    assert "# mine" not in page(stranger)


def test_a_cleared_editor_is_kept_and_bad_code_is_refused_with_the_candidates_message(client: Client, user: User, challenge: Challenge) -> None:
    client.force_login(user)
    assert save(client, "").status_code == 200 and Draft.objects.get(user=user).code == ""
    too_big = save(client, "x" * (300 * 1024))
    assert too_big.status_code == 400 and "the limit is" in too_big.json()["error"]
    not_utf8 = save(client, b"\xff\xfe def")
    assert not_utf8.status_code == 400 and "not valid UTF-8" in not_utf8.json()["error"]
    assert Draft.objects.get(user=user).code == ""  # nothing refused was kept
    anonymous = Client()
    assert save(anonymous, CODE).status_code == 401 and Draft.objects.count() == 1


def test_a_new_version_keeps_the_draft_and_the_page_says_what_changed(
    client: Client, user: User, challenge: Challenge, package_root: Path, package_dir: Path, settings: Any
) -> None:
    client.force_login(user)
    save(client, CODE)
    assert 'id="draft-changed"' not in page(client)
    (package_dir / "statement.md").write_text((package_dir / "statement.md").read_text() + "\nA clarification.\n")
    assert challenge_sync_from_dir(package_root).ok
    html = page(client)
    assert "# mine" in html and 'id="draft-changed"' in html and "its statement)" in html
    save(client, CODE)  # edited against the new version: nothing to say any more
    assert 'id="draft-changed"' not in page(client)
    (package_dir / "learn.md").write_text("## The idea\n\nA lesson, written after.\n")
    assert challenge_sync_from_dir(package_root).ok
    assert 'id="draft-changed"' not in page(client)  # a new version, but nothing that grades it or is shown while solving
    toml = (package_dir / "challenge.toml").read_text()
    retitled = re.sub(r'(?m)^title = ".*"$', 'title = "Adding two arrays"', toml, count=1)
    assert retitled != toml
    (package_dir / "challenge.toml").write_text(retitled)
    assert challenge_sync_from_dir(package_root).ok
    assert 'id="draft-changed"' not in page(client)  # retitled: the catalogue's words, not what grades it
    (package_dir / "probes" / "hidden.py").write_text((package_dir / "probes" / "hidden.py").read_text() + "\n# reweighted\n")
    assert challenge_sync_from_dir(package_root).ok
    assert "its tests or limits)" in page(client)
