"""The rules engine: seeded decks, cards, the Brag ranking and the two games, pure (no I/O, no clock, no global random state)."""
