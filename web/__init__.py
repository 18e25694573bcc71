"""The Django web layer: HTTP, templates, auth, ORM and the Celery tasks that call the grader."""
