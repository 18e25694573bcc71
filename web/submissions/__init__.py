"""Submissions: candidates' Run/Submit requests, their grading through Celery, results and hints."""
