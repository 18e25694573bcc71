"""State changes of submissions, one module per job.

The flow of a submission through them:

- ``intake``: a view calls ``submission_create``, which checks the code
  (``code_clean``: the grader's own rules), the challenge, the rate limits and
  the pending cap, saves a ``queued`` Submission and, once that transaction
  commits, hands it to ``dispatch``.
- ``dispatch``: sends the grading task to the Celery queue of the package's
  runtime; if the broker is down the row stays queued for the sweeper.
- ``grading``: the worker's state machine. ``submission_grade`` claims the
  submission with one conditional UPDATE (queued -> running), grades it
  through ``code_grade`` (``manage.py grade`` calls the same function) while a
  heartbeat thread stamps it, and stores the result only if it still holds the
  claim. A platform failure hands it back to the queue for the task's retry;
  after the last one, ``submission_grade_failed`` makes it ``internal_error``.
- ``live``: while it grades, each probe's outcome is stored on the running
  submission as it finishes (``live_progress``, a writer thread behind the
  grader's ``on_progress``), for the page to show before the verdict.
- ``sweeper``: ``submission_requeue_stale``, run by Celery beat, queues again
  what waited too long (a lost message) or whose worker stopped beating.
- ``regrade``: coaches regrade finished submissions in place; a candidate may
  regrade one the platform failed to grade.
- ``reveal``: the candidate asks for a hint their submission unlocked.

The database is the source of truth, and grading is idempotent: a finished
submission is never graded again, and a worker stores its result only if it
still holds the submission (``Submission.attempts``), so a duplicate or late
delivery changes nothing. Every step logs a JSON event with the submission id
(web/config/logs.py). The refusals are in ``web/submissions/errors.py``.
"""
