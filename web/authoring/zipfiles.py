"""Package zips: read an uploaded zip into package files, refusing anything unsafe; write one.

An upload is untrusted input from a coach's disk: it is read in memory with
hard limits (compressed and uncompressed size, number of files), and any
entry that could land outside the package (an absolute path, '..', a
drive letter, a backslash), a symbolic link or an encrypted entry refuses
the whole zip with a message naming the entry. Nothing is extracted to disk.

The zip written for an export holds one top-level folder named after the
slug, laid out like challenges/<track>/<slug>/, with fixed timestamps and
permissions; importing it gives back the same files, so the same version hash.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile

MAX_ZIP_BYTES = 5 * 1024 * 1024
MAX_UNCOMPRESSED_BYTES = 20 * 1024 * 1024
MAX_FILES = 500
# What editors and archivers leave behind; not package content.
_IGNORED_PARTS = {"__MACOSX", "__pycache__", ".pytest_cache", ".mypy_cache", ".DS_Store"}
_DRIVE = re.compile(r"^[A-Za-z]:")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


class ZipRefused(Exception):
    """The upload is not an acceptable package zip; the message says why."""


def _clean_name(name: str) -> list[str] | None:
    """The entry's path parts, None for an ignored entry; ZipRefused for an unsafe one."""
    if "\\" in name:
        raise ZipRefused(f"zip entry '{name}' uses a backslash in its path; use '/'")
    if name.startswith("/") or _DRIVE.match(name):
        raise ZipRefused(f"zip entry '{name}' has an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ZipRefused(f"zip entry '{name}' points outside the package ('..')")
    if not parts or any(part in _IGNORED_PARTS for part in parts) or parts[-1].endswith(".pyc"):
        return None
    return parts


def read_package_zip(data: bytes) -> dict[str, bytes]:
    """The package files in an uploaded zip, as {relative path: bytes}.

    The package may be at the top of the zip or inside one top-level folder
    (what zipping a package folder gives).
    """
    if len(data) > MAX_ZIP_BYTES:
        raise ZipRefused(f"the zip is {len(data):,} bytes; the limit is {MAX_ZIP_BYTES:,} bytes")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise ZipRefused("the upload is not a zip file") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_FILES:
            raise ZipRefused(f"the zip holds {len(infos)} entries; the limit is {MAX_FILES}")
        files: dict[str, bytes] = {}
        total = 0
        for info in infos:
            parts = _clean_name(info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ZipRefused(f"zip entry '{info.filename}' is a symbolic link; links are not allowed in a package")
            if parts is None or info.is_dir():
                continue
            if info.flag_bits & 0x1:
                raise ZipRefused(f"zip entry '{info.filename}' is encrypted")
            # Read at most what is left of the budget: the header's size may lie.
            budget = MAX_UNCOMPRESSED_BYTES - total
            try:
                with archive.open(info) as handle:
                    content = handle.read(budget + 1)
            except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError) as exc:
                raise ZipRefused(f"zip entry '{info.filename}' cannot be read: {exc}") from None
            total += len(content)
            if total > MAX_UNCOMPRESSED_BYTES:
                raise ZipRefused(f"the zip unpacks to more than {MAX_UNCOMPRESSED_BYTES:,} bytes")
            path = "/".join(parts)
            if path in files:
                raise ZipRefused(f"zip entry '{info.filename}' appears twice")
            files[path] = content
    return _strip_top_folder(files)


def _strip_top_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    if not files:
        raise ZipRefused("the zip holds no files")
    if "challenge.toml" in files:
        return files
    tops = {path.split("/", 1)[0] for path in files}
    if len(tops) == 1:
        inner = {path.split("/", 1)[1]: data for path, data in files.items() if "/" in path}
        if "challenge.toml" in inner and len(inner) == len(files):
            return inner
    raise ZipRefused("no challenge.toml at the top of the zip or inside its one top-level folder")


def write_package_zip(files: dict[str, bytes], folder: str) -> bytes:
    """A zip of the package under ``folder/``, byte-identical for identical files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(f"{folder}/{path}", date_time=_FIXED_TIME)
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[path])
    return buffer.getvalue()
