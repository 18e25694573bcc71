"""Coaches write challenges in the browser: edit, import/export zip, validate, publish."""
