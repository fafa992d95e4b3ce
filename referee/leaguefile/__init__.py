"""The league file: its keys and validation, the schedules it names, bots' commands, submissions' builds, and the lanes that keep a bot's processes from carrying one game's deals into another."""
