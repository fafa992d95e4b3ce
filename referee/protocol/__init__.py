"""The wire and policy vocabulary: protocol messages and the hot-path codec, faults and the fault policy, the clock, a game's setup, a bot's standing in a season."""
