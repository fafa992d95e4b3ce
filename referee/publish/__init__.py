"""What the referee publishes: the leaderboards, the league's page, replay pages, and the words around their figures.

One module per output, each imported by its own name (a process that needs one output loads no other: the live
helper, writing a short league's replay pages, never loads the standings' fit and numpy, 0.2 s of CPU a league):

- ``console_table``: the leaderboard as a table for the terminal;
- ``files``: leaderboard.md, .csv, .json and .html, written together, each replaced in one step;
- ``text``: the sentences a person reads (two bots compared, a sequential test, a duel's verdict, a season);
- ``redaction``: what a published record shows (no path of the organiser's machine, no bot's own words);
- ``league_page`` and ``replay_page``: the HTML pages (``html/``: their templates, script and style); ``live``
  writes them while a league runs, ``spectators`` feeds the games in play;
- ``head_to_head``: a page for each pair of bots that shared a game; ``archive``: every game that may be shown,
  as one archive;

and beside them ``columns``, the leaderboard's columns the console and the files share, and ``rounding``, the
digits the files publish figures with.
"""
