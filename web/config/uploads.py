"""A cap on the file parts of any multipart request, enforced while the body is read.

Place in the flow: Django parses a multipart body as soon as something reads
``request.POST``, and the CSRF check does on every POST, before any view
runs. File parts over 2.5 MB go to temporary files. Without a cap anyone
could post gigabytes to the login form and fill the disk before a view could
refuse. :class:`CappedUploadHandler` comes first in ``FILE_UPLOAD_HANDLERS``.
It counts the bytes of every file in the request and stops the upload once
they pass ``FILE_UPLOAD_MAX_BYTES``: the partial files are closed and
deleted, the rest of the body is read and dropped, not stored, so the
browser still gets the page's answer. The view then finds no file, and
:func:`upload_stopped` tells it why.
"""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest

_STOPPED = "_upload_stopped_at_bytes"


class CappedUploadHandler(FileUploadHandler):
    """Passes file data on to the next handler until the request's files pass the cap."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > settings.FILE_UPLOAD_MAX_BYTES:
            if self.request is not None:
                setattr(self.request, _STOPPED, settings.FILE_UPLOAD_MAX_BYTES)
            # Not connection_reset: the rest of the body is consumed and dropped, and the page answers.
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler (memory or temporary file) builds the file


def upload_stopped(request: HttpRequest) -> int | None:
    """The cap in bytes if this request's upload was stopped for passing it, else None."""
    stopped = getattr(request, _STOPPED, None)
    return int(stopped) if stopped is not None else None
