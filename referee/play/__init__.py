"""Running games with bots: one game end to end, the session that talks to a bot, bot processes, the freezer, the in-process seats, the sandbox, and fakes of a session's moving parts for tests."""
