"""How a package's files are kept in a JSON column, and back.

A package's files are bytes. Text files (nearly all) are stored as text so
that the admin and a database dump stay readable; anything that is not
UTF-8 (an .npy fixture, say) is stored as base64. The round trip is exact.
"""

from __future__ import annotations

import base64
from typing import Any, TypedDict

from grader.package import graded_version, Package


class StoredFile(TypedDict):
    encoding: str  # "utf-8" or "base64"
    content: str


def files_encode(files: dict[str, bytes]) -> dict[str, StoredFile]:
    stored: dict[str, StoredFile] = {}
    for path, data in sorted(files.items()):
        try:
            stored[path] = {"encoding": "utf-8", "content": data.decode("utf-8")}
        except UnicodeDecodeError:
            stored[path] = {"encoding": "base64", "content": base64.b64encode(data).decode("ascii")}
    return stored


def files_decode(stored: dict[str, StoredFile]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path, item in stored.items():
        if item["encoding"] == "utf-8":
            files[path] = item["content"].encode("utf-8")
        elif item["encoding"] == "base64":
            files[path] = base64.b64decode(item["content"], validate=True)
        else:
            raise ValueError(f"stored file {path!r} has unknown encoding {item['encoding']!r}")
    return files


def version_fields(package: Package) -> dict[str, Any]:
    """What a stored ChallengeVersion holds of a loaded package (sync and browser authoring alike)."""
    return {
        "files": files_encode(package.files),
        "given": {f"given/{name}.py": data.decode("utf-8") for name, data in package.given_sources.items()},
        "statement": package.statement,
        "starter_code": package.starter_code,
        "graded": graded_version(package.files),
        "hints": [{"id": h.id, "tier": h.tier, "tags": list(h.tags), "text": h.text} for h in package.hints],
        "runtime": package.runtime,
        "entry": package.entry,
    }
