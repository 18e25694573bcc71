"""Versions' ``graded`` hashes again, now that the hash leaves out challenge.toml's title, summary, tags and
difficulty (grader.package.UNGRADED_FIELDS): without this, a stored version would differ from a new one of the same
tests by the definition alone, and a candidate's draft would say the grading changed when it did not."""

from typing import Any

from django.db import migrations


def refill_graded(apps: Any, schema_editor: Any) -> None:
    from grader.errors import PackageError
    from grader.package import graded_version
    from web.challenges.storage import files_decode

    ChallengeVersion = apps.get_model("challenges", "ChallengeVersion")
    for version in ChallengeVersion.objects.only("pk", "files").iterator(chunk_size=20):
        try:
            graded = graded_version(files_decode(version.files))
        except (PackageError, KeyError, UnicodeDecodeError):
            graded = ""  # unreadable: empty, read as "may have changed" (as 0005 left it)
        ChallengeVersion.objects.filter(pk=version.pk).update(graded=graded)


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0005_version_graded"),
    ]

    operations = [
        migrations.RunPython(refill_graded, migrations.RunPython.noop),
    ]
