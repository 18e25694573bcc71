"""Command-line client of the JSON API: submit a file, watch it being graded, print the result.

    python -m web.cli submit SLUG FILE [--run] [--url URL] [--token TOKEN]
    python -m web.cli hint SUBMISSION_ID HINT_ID      # reveal a hint the submission unlocked
    python -m web.cli scorecard INTERVIEW_ID [--json] # a mock interview's scorecard (its interviewer)

It talks to a running site over HTTP (/api/v1/) with the standard library
only, so it needs neither Django nor this repository's environment: copy
this one file anywhere with Python 3.10+. The URL and the token come from
--url/--token or the MLPREP_URL/MLPREP_TOKEN environment variables (a user
gets a token from ``manage.py api_token USERNAME``).

It posts the code, polls the submission, prints each status change and
each probe as it finishes (the live progress), then the verdict, score, one line per probe and the hints shown.
Exit codes: 0 accepted, 1 graded but not accepted, 2 a usage or HTTP error
(the message names the problem).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, TextIO

DEFAULT_URL = "http://127.0.0.1:8000"
POLL_SECONDS = 1.0
USER_AGENT = "mlprep-cli/1"


class CliError(Exception):
    """A problem the user must fix (or an HTTP failure); printed as one line, exit code 2."""


class Api:
    def __init__(self, base_url: str, token: str, *, timeout: float = 30.0) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise CliError(f"--url must be an http(s) URL like {DEFAULT_URL}, not {base_url!r}.")
        self.base = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        url = path if path.startswith(("http://", "https://")) else self.base + path
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"Accept": "application/json", "Authorization": f"Token {self.token}", "User-Agent": USER_AGENT}
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)  # noqa: S310 - http(s) only, checked in __init__
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as response:  # noqa: S310 - the scheme is checked above
                return _json(response.read(), url)
        except urllib.error.HTTPError as exc:
            message = _error_message(exc.read(), exc.code)
            raise CliError(f"{method} {url}: HTTP {exc.code}: {message}") from None
        except urllib.error.URLError as exc:
            raise CliError(f"cannot reach {url}: {exc.reason}") from None
        except TimeoutError:
            raise CliError(f"{url} did not answer within {self.timeout:g} s") from None


def _json(raw: bytes, url: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        raise CliError(f"{url} did not answer JSON (is --url the site's address?)") from None
    if not isinstance(data, dict):
        raise CliError(f"{url} answered unexpected JSON")
    return data


def _error_message(raw: bytes, code: int) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return "the server's answer was not JSON"
    if isinstance(data, dict):
        return str(data.get("error") or data.get("detail") or data)
    return str(data)


def _text(fragment: str | None) -> str:
    """A hint's sanitised HTML as plain text for a terminal."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment or "")).strip()


def diff_lines(diff: dict[str, Any], limit: int = 10) -> list[str]:
    """A Run's structured diff (grader/diff.py) as a few lines: each differing leaf, an array's first mismatches, or the expected value."""
    if diff.get("tree") is None:
        return [f"expected: {diff['expected_preview']}"] if diff.get("expected_preview") else []
    lines: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        if "collapsed" in node or "omitted" in node or node.get("equal"):
            return
        path, note = node.get("path"), node.get("note")
        if "children" in node:
            if note:
                lines.append(f"{path}: {note}")
            for child in node["children"]:
                walk(child)
        elif node.get("first"):
            lines.append(f"{path}: {node.get('mismatches')} of {node.get('elements')} elements differ ({node.get('tolerance')})")
            lines.extend(f"  at {m['index']}: yours {m['received']}, expected {m['expected']}" for m in node["first"][:3])
        else:
            lines.append(f"{path}: yours {node.get('received')}, expected {node.get('expected')}" + (f" ({note})" if note else ""))

    walk(diff["tree"])
    more = len(lines) - limit + int(diff.get("omitted") or 0)
    return lines[:limit] + ([f"... and {more} more"] if more > 0 else [])


def error_report_line(report: Any) -> str:
    """A failing float tensor's error report (grader/error_report.py) in one line: a public probe's summary, a hidden one's counts."""
    if not isinstance(report, dict):
        return ""
    if report.get("summary"):
        return f"error report: {report['summary']}"
    if report.get("hidden") and isinstance(report.get("elements"), int):
        line = f"error report: {report.get('over_bound')} of {report['elements']} elements over their bound"
        if report.get("worst_index"):
            line += f"; worst at {report['worst_index']}"
        if report.get("nan_mismatches") or report.get("inf_mismatches"):
            line += f"; {report.get('nan_mismatches')} NaN and {report.get('inf_mismatches')} Inf mismatches"
        return line + " (the page draws where)"
    return ""


def print_result(result: dict[str, Any], out: TextIO) -> None:
    score = result.get("score")
    verdict = result.get("verdict_label") or result.get("verdict") or "?"
    out.write(f"Verdict: {verdict}" + (f"  score {score:g}" if isinstance(score, int | float) else "") + "\n")
    if result.get("message"):
        out.write(f"{result['message']}\n")
    for probe in result.get("probes") or []:
        mark = "PASS" if probe.get("passed") else "FAIL"
        line = f"  {mark} {probe.get('name')} [{probe.get('category')}]"
        if not probe.get("passed") and probe.get("message"):
            line += f": {probe['message']}"
        out.write(line + "\n")
        if not probe.get("passed") and isinstance(probe.get("diff"), dict):
            out.write("".join(f"      {text}\n" for text in diff_lines(probe["diff"])))
        line = error_report_line(probe.get("error_report")) if not probe.get("passed") else ""
        if line:
            out.write(f"      {line}\n")
        if probe.get("stdout"):
            out.write("".join(f"      | {s}\n" for s in str(probe["stdout"]).splitlines()))
    hints = result.get("hints") or []
    for hint in hints:
        if hint.get("shown"):
            out.write(f"Hint (tier {hint.get('tier')}): {_text(hint.get('html'))}\n")
    # Nothing is shown unasked: say how many are waiting and how to see the one offered next.
    waiting = sum(1 for hint in hints if not hint.get("shown"))
    offered = next((hint for hint in hints if hint.get("offered")), None)
    if waiting and offered is not None:
        out.write(
            f"{waiting} hint(s) unlocked; the next (tier {offered.get('tier')}): python -m web.cli hint {result.get('id')} {offered.get('id')}\n"
        )


LIVE_OUTCOMES = {"passed": "passed", "failed": "failed", "done": "finished (judged with the result)"}


def print_live(live: Any, printed: int, out: TextIO) -> int:
    """Print the live lines after the first ``printed`` ("  [2/5] name passed"); how many are printed now."""
    if not isinstance(live, dict):
        return printed
    probes = live.get("probes") or []
    for i, probe in enumerate(probes[printed:], start=printed + 1):
        status = probe.get("status")
        extra = f" ({str(status).replace('_', ' ')})" if status and status != "ok" else ""
        outcome = LIVE_OUTCOMES.get(str(probe.get("outcome")), LIVE_OUTCOMES["done"])
        out.write(f"  [{i}/{live.get('total')}] {probe.get('name')} {outcome}{extra}\n")
    out.flush()
    return max(printed, len(probes))


def submit(api: Api, slug: str, code: str, kind: str, out: TextIO, *, poll_seconds: float = POLL_SECONDS, max_wait: float = 900.0) -> int:
    quoted = urllib.parse.quote(slug, safe="")
    created = api.request("POST", f"/api/v1/challenges/{quoted}/submissions/", {"kind": kind, "code": code})
    out.write(f"{kind.capitalize()} #{created.get('id')}: {created.get('status')}\n")
    out.flush()
    last = str(created.get("status"))
    printed = 0  # live lines printed so far
    deadline = time.monotonic() + max_wait
    while True:
        result = api.request("GET", str(created["url"]))
        if result.get("status") != last:
            last = str(result.get("status"))
            out.write(f"{kind.capitalize()} #{created.get('id')}: {last}\n")
            out.flush()
        printed = print_live(result.get("live"), printed, out)
        if result.get("done"):
            print_result(result, out)
            return 0 if result.get("verdict") == "accepted" else 1
        if time.monotonic() > deadline:
            raise CliError(f"submission {created.get('id')} is still {last} after {max_wait:g} s; poll {api.base}{created['url']}")
        time.sleep(poll_seconds)


def reveal(api: Api, submission_id: int, hint_id: str, out: TextIO) -> int:
    """Reveal one hint of a graded submission; print the hints now shown."""
    path = f"/api/v1/submissions/{submission_id}/hints/{urllib.parse.quote(hint_id, safe='')}/reveal/"
    result = api.request("POST", path)
    for hint in result.get("hints") or []:
        if hint.get("shown"):
            out.write(f"Hint (tier {hint.get('tier')}) {hint.get('id')}: {_text(hint.get('html'))}\n")
    return 0


def print_scorecard(card: dict[str, Any], out: TextIO) -> None:
    """A mock interview's scorecard (GET /api/v1/interviews/ID/scorecard) as text: each rubric row with its evidence."""
    out.write(f"Interview #{card.get('id')}: {card.get('candidate')} with {card.get('interviewer')} ({card.get('state')})\n")
    out.write(f"Recommendation: {card.get('recommendation_label') or 'not given'}\n")
    for ch in card.get("challenges") or []:
        best = ch.get("best_score")
        best_text = f"best {best:g}" if isinstance(best, int | float) else "no graded submit"
        out.write(f"  {ch.get('title')}: {best_text}, {ch.get('runs')} runs, {ch.get('submits')} submits, {ch.get('hints')} hints\n")
    out.write("Rubric:\n")
    for row in card.get("rubric") or []:
        score = row.get("score")
        out.write(f"  {row.get('label')}: {score if score is not None else '-'}" + (f"  {row['comment']}" if row.get("comment") else "") + "\n")
        comments = {c.get("key"): c.get("comment") for c in row.get("citations") or [] if c.get("comment")}
        for line in row.get("evidence") or []:
            out.write(f"    - {line.get('text')}\n")
            out.write("".join(f'      "{comments[key]}"\n' for key in line.get("keys") or [] if key in comments))
    if card.get("notes"):
        out.write("Notes:\n" + "".join(f"  {text}\n" for text in str(card["notes"]).splitlines()))


def scorecard(api: Api, interview_id: int, out: TextIO, *, as_json: bool = False) -> int:
    card = api.request("GET", f"/api/v1/interviews/{interview_id}/scorecard")
    if as_json:
        out.write(json.dumps(card, indent=2) + "\n")
    else:
        print_scorecard(card, out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m web.cli", description="Submit code to the ML interview prep site and wait for the grade.")
    commands = parser.add_subparsers(dest="command", required=True)
    sub = commands.add_parser("submit", help="submit (or --run) a file and print the result as it arrives")
    sub.add_argument("slug", help="the challenge's slug, as in its URL")
    sub.add_argument("file", help="your solution file ('-' reads standard input)")
    sub.add_argument("--run", action="store_true", help="run the public probes (shows outputs) instead of submitting for a score")
    hint = commands.add_parser("hint", help="reveal a hint that one of your graded submissions unlocked")
    hint.add_argument("submission", type=int, help="the submission's number, as `submit` printed it")
    hint.add_argument("hint", help="the hint's id, as `submit` printed it")
    card = commands.add_parser("scorecard", help="print a mock interview's scorecard (you must be its interviewer)")
    card.add_argument("interview", type=int, help="the interview's number, as in /interviews/NUMBER/live/")
    card.add_argument("--json", action="store_true", help="print the API's JSON as it is")
    for command in (sub, hint, card):
        command.add_argument("--url", default=None, help=f"the site's address (default: $MLPREP_URL or {DEFAULT_URL})")
        command.add_argument("--token", default=None, help="your API token (default: $MLPREP_TOKEN)")
    return parser


def _read_code(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    path = Path(name)
    if not path.is_file():
        raise CliError(f"no such file: {name}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{name} is not UTF-8 text (byte {exc.start})") from None


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = _parser().parse_args(argv)  # exits 2 with argparse's message on bad usage
    try:
        # A token copied from a terminal (`docker-compose exec` without -T ends lines with \r\n) carries whitespace.
        token = (args.token or os.environ.get("MLPREP_TOKEN", "")).strip()
        if not token:
            raise CliError("no API token: pass --token or set MLPREP_TOKEN (an admin makes one with `manage.py api_token USERNAME`)")
        if not token.isprintable() or any(c.isspace() for c in token):
            raise CliError("the API token holds spaces or control characters: copy it again, it is one word")
        api = Api(args.url or os.environ.get("MLPREP_URL") or DEFAULT_URL, token)
        if args.command == "hint":
            return reveal(api, args.submission, args.hint, out)
        if args.command == "scorecard":
            return scorecard(api, args.interview, out, as_json=args.json)
        return submit(api, args.slug, _read_code(args.file), "run" if args.run else "submit", out)
    except CliError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted; the submission goes on being graded on the site\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
