"""A track's page: ``challenges/<track>/track.toml`` read and checked (title, summary, description, order).

Place in the flow: the web's catalogue (web/challenges/services.py) syncs
each track folder through :func:`load_track`; its challenges are packages
(grader/package_load.py).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from grader.errors import PackageError
from grader.package import SLUG_RE
from grader.package_load import TomlFields


@dataclass(frozen=True)
class Track:
    """A track's page: ``challenges/<track>/track.toml`` (title, summary, description, order)."""

    slug: str
    title: str
    summary: str
    description: str
    order: tuple[str, ...]


def load_track(folder: Path | str) -> Track:
    """Load ``<folder>/track.toml``; PackageError naming the file and field on bad input.

    ``order`` lists the track's challenge slugs from warm-up to hard; the
    catalogue shows listed challenges in that order and any others after them.
    """
    folder = Path(folder)
    path = folder / "track.toml"
    try:
        meta = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PackageError("file is missing", path=str(path)) from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PackageError(f"invalid TOML: {exc}", path=str(path)) from None
    f = TomlFields(meta, str(path))
    order = f.str_list("order")
    if len(set(order)) != len(order):
        raise PackageError("lists a challenge twice", path=str(path), field="order")
    bad = [slug for slug in order if not SLUG_RE.match(slug)]
    if bad:
        raise PackageError(f"not a challenge slug: {', '.join(bad)}", path=str(path), field="order")
    return Track(
        slug=folder.name,
        title=f.text("title"),
        summary=f.text("summary"),
        description=f.text("description"),
        order=order,
    )


def discover_tracks(root: Path | str) -> list[Path]:
    """Every ``<root>/<track>`` folder that has a track.toml, sorted."""
    return sorted(p.parent for p in Path(root).glob("*/track.toml"))
