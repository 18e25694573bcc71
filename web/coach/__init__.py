"""Pages for coaches: the grading dashboard (staff-only until the coach role of issue #5)."""
