"""Challenges: the catalogue, the stored package versions, and syncing them from challenges/."""
