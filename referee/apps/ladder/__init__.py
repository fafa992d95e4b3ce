"""``referee ladder``: a continuous league fed by a folder of submissions (docs/ladder.md)."""
