"""The API's input checks and the shapes of its answers (also what the OpenAPI schema publishes).

Output shapes are built by ``web.api.presenters``; these serializers describe
them for the schema and validate the one input, a run or submit.
"""

from __future__ import annotations

from rest_framework import serializers

from web.submissions.models import Kind


class ChallengeSummarySerializer(serializers.Serializer):  # type: ignore[type-arg]
    slug = serializers.CharField()
    title = serializers.CharField()
    track = serializers.CharField()
    difficulty = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()
    runtime = serializers.CharField()
    url = serializers.CharField(help_text="This challenge in the API.")


class PublicProbeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    category = serializers.CharField()
    weight = serializers.FloatField()
    description = serializers.CharField()


class UnlockedHintSerializer(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.CharField()
    tier = serializers.IntegerField()
    tags = serializers.ListField(child=serializers.CharField())
    text = serializers.CharField(help_text="Markdown.")
    html = serializers.CharField(help_text="The Markdown rendered and sanitised.")


class GivenModuleSerializer(serializers.Serializer):  # type: ignore[type-arg]
    path = serializers.CharField(help_text="given/<name>.py in the package.")
    import_name = serializers.CharField(help_text="What the code imports: given.<name>.")
    source = serializers.CharField()


class ChallengeDetailSerializer(ChallengeSummarySerializer):
    version = serializers.CharField()
    statement = serializers.CharField(help_text="Markdown, as written.")
    statement_html = serializers.CharField(help_text="The statement rendered and sanitised.")
    entry = serializers.CharField(help_text="The file the code is graded as.")
    starter_code = serializers.CharField()
    given = GivenModuleSerializer(many=True, help_text="Read-only modules the code may import; a submission cannot replace them.")
    public_probes = PublicProbeSerializer(many=True, help_text="The probes Run uses; Submit's hidden probes are not listed.")
    hints = UnlockedHintSerializer(many=True, help_text="Hints this user has been shown for this challenge.")
    submit_url = serializers.CharField()


class StrictTextField(serializers.CharField):
    """A string and only a string: DRF's CharField would turn 5 or true into "5" or "True"."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class SubmissionCreateSerializer(serializers.Serializer):  # type: ignore[type-arg]
    kind = serializers.ChoiceField(choices=Kind.choices, help_text="run: public probes, shown in full; submit: hidden probes, scored.")
    # Blank and whitespace kept: the service's own check (code_clean) says what is wrong.
    code = StrictTextField(allow_blank=True, trim_whitespace=False, help_text="The whole solution file, UTF-8, at most 256 KiB.")


class SubmissionCreatedSerializer(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    url = serializers.CharField(help_text="Poll this until done is true.")


class LiveProbeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    outcome = serializers.CharField(help_text="passed or failed (its check, run as it finished), or done (judged at the end).")
    status = serializers.CharField(required=False, help_text="Run only: the runner's status (ok, error, timeout, memory, crashed, ...).")


class LiveProgressSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """A running submission's probes so far (grader.feedback.candidate_progress); the verdict comes from the result."""

    total = serializers.IntegerField(help_text="Probes in the run.")
    finished = serializers.IntegerField()
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    probes = LiveProbeSerializer(many=True, help_text="In the order they finished. Submit: name and outcome only.")


class SubmissionSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The challenge page's status JSON (web.submissions.presenters.submission_payload)."""

    id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField(help_text="queued, running or done.")
    done = serializers.BooleanField()
    verdict = serializers.CharField(allow_null=True)
    verdict_label = serializers.CharField(allow_null=True)
    score = serializers.FloatField(allow_null=True)
    categories = serializers.DictField()
    probes = serializers.ListField(
        child=serializers.DictField(),
        help_text="Each probe's outcome. Run: message, observation, expected value (also when the probe raised), printed output, "
        "and for a failing probe `diff`: both sides' types, then a tree with equal runs collapsed, differing leaves by path and an "
        "array's first mismatching indices with both values and the tolerance (or, when it raised, the expected value as text). "
        "Submit: a message composed by the grader (which property failed, where, how far), nothing the code printed or raised. "
        "A failing float tensor has `error_report` (both kinds): shape, dtype, how many elements are over their bound, NaN/Inf "
        "mismatch counts, the worst index, a map of error/bound down-sampled to at most 64x64 cells (`map.cells`, one character "
        "per cell, see grader/error_report.py) with the dims each axis stands for, and a histogram of log10(error/bound) by decade; "
        "Run adds max abs/rel/ULP error and a summary line, Submit's map is in whole decades and has no values (`hidden`: true).",
    )
    hints = serializers.ListField(
        child=serializers.DictField(),
        help_text="Every hint the failing probes unlocked (id, tier, tags, the probes it is about), the one to fix first first; "
        "`html` only for hints revealed through reveal_url (none is shown unasked); `offered` marks the one to reveal next.",
    )
    message = serializers.CharField()
    error_line = serializers.IntegerField(
        allow_null=True, help_text="Verdict syntax_error: the line (from 1) the compiler's error names; null otherwise."
    )
    live = LiveProgressSerializer(
        allow_null=True, help_text="While status is running: the probes finished so far (poll again for more); null otherwise."
    )
    queue_ahead = serializers.IntegerField(
        allow_null=True, help_text="While status is queued: how many gradings on its queue are ahead of it (0: next); null otherwise."
    )
    version = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    probe_details = serializers.CharField(
        help_text="full: each probe carries its observation, expected value and output (a Run); summary: the grader's hidden view."
    )
    url = serializers.CharField(help_text="Where to poll this submission.")
    regrade_url = serializers.CharField(
        allow_null=True, help_text="Verdict internal_error (the platform failed): POST here to grade the same code again; null otherwise."
    )
    cancel_url = serializers.CharField(
        allow_null=True, help_text="While queued or running: POST here to stop it (verdict cancelled, nothing scored); null otherwise."
    )
    cancelling = serializers.BooleanField(help_text="A cancel was asked while it ran; the worker is stopping it.")


class ErrorSerializer(serializers.Serializer):  # type: ignore[type-arg]
    error = serializers.CharField()
    retry_after = serializers.IntegerField(required=False, help_text="Seconds to wait (429 and 503; the Retry-After header too)")


class LastAttemptSerializer(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="run or submit.")
    status = serializers.CharField(help_text="queued, running or done.")
    verdict = serializers.CharField(allow_null=True, help_text="Empty until graded.")
    verdict_label = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    url = serializers.CharField(help_text="The submission in the API: what you may see of its result.")


class ChallengeProgressSerializer(serializers.Serializer):  # type: ignore[type-arg]
    slug = serializers.CharField()
    title = serializers.CharField()
    difficulty = serializers.CharField()
    state = serializers.ChoiceField(
        choices=["solved", "attempted", "not_started"],
        help_text="solved: a Submit was accepted; attempted: any Run or Submit, none accepted; not_started: none.",
    )
    best_score = serializers.FloatField(allow_null=True, help_text="The best graded Submit's score, 0-100 (Runs do not count).")
    submits = serializers.IntegerField()
    runs = serializers.IntegerField()
    categories = serializers.DictField(help_text="The best Submit's score per probe category: {name: {score, passed, total}}.")
    last_attempt = LastAttemptSerializer(allow_null=True, help_text="The newest Run or Submit, graded or not.")


class TrackProgressSerializer(serializers.Serializer):  # type: ignore[type-arg]
    slug = serializers.CharField()
    title = serializers.CharField()
    solved = serializers.IntegerField()
    attempted = serializers.IntegerField()
    total = serializers.IntegerField()
    challenges = ChallengeProgressSerializer(many=True)


class ScorePointSerializer(serializers.Serializer):  # type: ignore[type-arg]
    attempt = serializers.IntegerField(help_text="1 for the challenge's first graded Submit, and so on.")
    score = serializers.FloatField()
    verdict = serializers.CharField()
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    url = serializers.CharField()


class ScoreSeriesSerializer(serializers.Serializer):  # type: ignore[type-arg]
    slug = serializers.CharField()
    title = serializers.CharField()
    track = serializers.CharField()
    points = ScorePointSerializer(many=True)


class ProgressSerializer(serializers.Serializer):  # type: ignore[type-arg]
    solved = serializers.IntegerField()
    attempted = serializers.IntegerField()
    total = serializers.IntegerField()
    tracks = TrackProgressSerializer(many=True, help_text="Every track open to you and every challenge in it.")
    scores = ScoreSeriesSerializer(many=True, help_text="Scores over attempts: each challenge's graded Submits, oldest first.")


class HistoryRowSerializer(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField()
    challenge = serializers.CharField(help_text="The challenge's slug.")
    title = serializers.CharField()
    track = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.CharField()
    verdict = serializers.CharField(allow_null=True)
    verdict_label = serializers.CharField(allow_null=True)
    score = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField(help_text="The submission in the API: what you may see of its result.")


class HistoryPageSerializer(serializers.Serializer):  # type: ignore[type-arg]
    count = serializers.IntegerField(help_text="Submissions matching the filters, on every page.")
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    next = serializers.CharField(allow_null=True, help_text="The next (older) page, with the same filters.")
    previous = serializers.CharField(allow_null=True)
    results = HistoryRowSerializer(many=True, help_text="Newest first.")


class CitedProbeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField()
    category = serializers.CharField()
    outcome = serializers.ChoiceField(choices=["failed", "passed", "fixed"], help_text="fixed: passed here after failing earlier.")


class CitationLinksSerializer(serializers.Serializer):  # type: ignore[type-arg]
    submission = serializers.CharField(allow_null=True, help_text="The run's or submit's details page (interviewer only).")
    timeline = serializers.CharField(help_text="The moment on the interview's timeline (#t=<seconds since the start>).")


class CitationSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """One moment cited in a rubric row (web.interviews.evidence.citation_payload); label and time as when cited."""

    id = serializers.IntegerField()
    criterion = serializers.CharField()
    key = serializers.CharField(help_text='The moment\'s stable key: "submit:123", "run:122", "hint:45", "snapshot:88", ...')
    kind = serializers.CharField()
    at = serializers.DateTimeField()
    offset_seconds = serializers.IntegerField(help_text="Seconds since the interview started.")
    clock = serializers.CharField(help_text="mm:ss since the interview started.")
    label = serializers.CharField()
    challenge = serializers.CharField()
    submission_id = serializers.IntegerField(allow_null=True, help_text="The run or submit cited, or the one whose result unlocked a hint.")
    submission_label = serializers.CharField(allow_null=True, help_text='"Submit #123": the text of the submission link.')
    probe = CitedProbeSerializer(allow_null=True, help_text="The one probe cited, or null for the whole moment.")
    text = serializers.CharField(help_text='One line, e.g. "gradients: failed double_backward at 12:41".')
    comment = serializers.CharField(help_text="The interviewer's own words.")
    links = CitationLinksSerializer()


class EvidenceLineSerializer(serializers.Serializer):  # type: ignore[type-arg]
    text = serializers.CharField(help_text='The citations of one probe read together: "gradients: failed double_backward at 12:41, fixed at 14:03".')
    keys = serializers.ListField(child=serializers.CharField(), help_text="The moments the line cites.")


class ScorecardRubricRowSerializer(serializers.Serializer):  # type: ignore[type-arg]
    criterion = serializers.CharField()
    label = serializers.CharField()
    score = serializers.IntegerField(allow_null=True, help_text="1 (weak) to 4 (strong); null until scored.")
    comment = serializers.CharField()
    citations = CitationSerializer(many=True, help_text="In the order the moments happened.")
    evidence = EvidenceLineSerializer(many=True, help_text="The citations as the printed scorecard reads them.")


class ScorecardChallengeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    slug = serializers.CharField()
    title = serializers.CharField()
    best_score = serializers.FloatField(allow_null=True, help_text="The best graded Submit's score in the interview.")
    runs = serializers.IntegerField()
    submits = serializers.IntegerField()
    hints = serializers.IntegerField(help_text="Hints the candidate asked for during the interview.")


class ScorecardSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """A mock interview's scorecard (web.interviews.evidence.scorecard_export): for its interviewer only."""

    id = serializers.IntegerField()
    candidate = serializers.CharField()
    interviewer = serializers.CharField()
    state = serializers.ChoiceField(choices=["scheduled", "live", "ended"])
    duration_minutes = serializers.IntegerField()
    started_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)
    recommendation = serializers.ChoiceField(choices=["strong_no", "no", "yes", "strong_yes"], allow_null=True)
    recommendation_label = serializers.CharField(allow_null=True)
    notes = serializers.CharField()
    challenges = ScorecardChallengeSerializer(many=True)
    rubric = ScorecardRubricRowSerializer(many=True, help_text="Every criterion, scored or not, with the moments it cites.")
    scorecard_url = serializers.CharField(help_text="The printable scorecard page.")
