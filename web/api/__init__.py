"""The JSON API for scripts and the command-line client (/api/v1/, Django REST Framework)."""
