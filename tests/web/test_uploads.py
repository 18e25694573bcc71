"""The cap on uploaded files, enforced while the body is read: web/config/uploads.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.test import Client
from django.urls import reverse

from web.authoring.zipfiles import MAX_ZIP_BYTES

MiB = 1024 * 1024


@pytest.fixture
def spooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many bytes reached the temporary-file handler (the disk), chunk by chunk."""
    chunks: list[int] = []
    original = TemporaryFileUploadHandler.receive_data_chunk

    def counting(self: TemporaryFileUploadHandler, raw_data: bytes, start: int) -> Any:
        chunks.append(len(raw_data))
        return original(self, raw_data, start)

    monkeypatch.setattr(TemporaryFileUploadHandler, "receive_data_chunk", counting)
    return chunks


def test_an_anonymous_multipart_post_to_the_login_form_never_reaches_the_disk_past_the_cap(
    db: Any, settings: Any, spooled: list[int]
) -> None:
    settings.FILE_UPLOAD_MAX_BYTES = 1 * MiB
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = "x" * 32  # so that the CSRF check reads the body for the token
    response = client.post(reverse("login"), {"username": "x", "junk": SimpleUploadedFile("big.bin", b"\0" * (6 * MiB))})
    assert response.status_code == 403  # no matching CSRF token: refused, after reading at most the cap into a file
    assert 0 < sum(spooled) <= settings.FILE_UPLOAD_MAX_BYTES


def test_an_oversized_package_upload_is_stopped_and_the_page_says_so(coach_client: Client, settings: Any, spooled: list[int]) -> None:
    settings.FILE_UPLOAD_MAX_BYTES = 1 * MiB
    response = coach_client.post(reverse("author-import"), {"package": SimpleUploadedFile("huge.zip", b"PK" + b"\0" * (6 * MiB))})
    assert response.status_code == 400
    assert f"The upload passed {1 * MiB:,} bytes and was stopped; the limit for a zip is {MAX_ZIP_BYTES:,} bytes." in response.content.decode()
    assert sum(spooled) <= settings.FILE_UPLOAD_MAX_BYTES


def test_an_upload_under_the_cap_reaches_the_view_whole(coach_client: Client, settings: Any) -> None:
    # Over the zip limit but under the request cap: the view measures it and names both sizes.
    size = MAX_ZIP_BYTES + 1
    assert size < settings.FILE_UPLOAD_MAX_BYTES
    response = coach_client.post(reverse("author-import"), {"package": SimpleUploadedFile("big.zip", b"\0" * size)})
    assert response.status_code == 400
    assert f"The zip is {size:,} bytes; the limit is {MAX_ZIP_BYTES:,} bytes." in response.content.decode()
