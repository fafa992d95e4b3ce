"""The applications: a league, a duel, check-bot, replay-to, a person's seat (terminal and browser), the ladder and the site."""
