"""Mock interviews: a timed session for a candidate, watched live by a coach, ending in a scorecard."""
