"""Records and figures: games.jsonl and league.json, game logs, transcripts, statistics, the ranking and standings, the luck of the cards, and what may be shown when."""
