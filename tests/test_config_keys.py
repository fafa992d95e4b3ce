"""The key tables of docs/leagues.md and tournaments/league.example.yaml are the schema's, as generated."""

from __future__ import annotations

import yaml

from referee.leaguefile.config import keys, load_league
from referee.leaguefile.config.schema import LEAGUE_KEYS, LIMITS, names
from referee.play.sandbox import LIMIT_KEYS


def test_the_committed_tables_are_what_the_schema_generates() -> None:
    docs, example = keys.DOCS.read_text(), keys.EXAMPLE.read_text()
    assert docs == keys.written_docs(docs), "docs/leagues.md: run python -m referee.leaguefile.config.keys --write"
    assert example == keys.written_example(example), (
        "league.example.yaml: run python -m referee.leaguefile.config.keys --write"
    )
    assert keys.markdown_keys() in docs and keys.example_index() in example


def test_the_example_shows_every_key_of_the_schema_and_loads() -> None:
    written = yaml.safe_load(keys.EXAMPLE.read_text())
    assert set(written) == set(LEAGUE_KEYS)
    assert load_league(keys.EXAMPLE).name == "example"


def test_the_schema_limits_are_the_sandboxes() -> None:
    assert names(LIMITS) == LIMIT_KEYS


def test_the_command_prints_the_tables(capsys) -> None:
    assert keys.main(["--markdown"]) == 0
    assert capsys.readouterr().out.startswith(keys.markdown_keys())
    assert keys.main(["--example"]) == 0
    assert capsys.readouterr().out == keys.example_index() + "\n"
