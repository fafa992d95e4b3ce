"""The key tables made from the schema: docs/leagues.md's and the key index of ``tournaments/league.example.yaml``.

``python -m referee.leaguefile.config.keys --markdown`` prints the docs' tables,
``--example`` the example's index, and ``--write`` puts both in their files
(between the marker lines); a test checks the committed files equal them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.leaguefile.config.schema import BOT, FAULT_POLICY, FORMAT, LEAGUE, LIMITS, Key

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "leagues.md"
EXAMPLE = ROOT / "tournaments" / "league.example.yaml"
MADE_BY = "made from referee/leaguefile/config/schema.py by `python -m referee.leaguefile.config.keys --write`; edit the schema, not this"
KEY_TABLES = ("<!-- the key tables: " + MADE_BY + " -->", "<!-- end of the key tables -->")
LIMITS_TABLE = ("<!-- the limits table: " + MADE_BY + " -->", "<!-- end of the limits table -->")
EXAMPLE_INDEX = (
    "# Every key at a glance (made by `python -m referee.leaguefile.config.keys --write`):",
    "# (end of the key index)",
)


def _row(*cells: str) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _key_rows(keys: tuple[Key, ...], prefix: str = "") -> list[str]:
    return [_row(f"`{prefix}{key.name}`", key.allowed(), key.default_text(), key.help) for key in keys]


def markdown_keys() -> str:
    """The tables of every key of a league file, of a bot entry and of each format, for docs/leagues.md."""
    header = [_row("key", "value", "default", "what it is"), "|---|---|---|---|"]
    league_rows: list[str] = []
    for key in LEAGUE:
        league_rows += _key_rows((key,))
        if key.name == "fault_policy":
            league_rows += _key_rows(FAULT_POLICY, "fault_policy.")
    format_rows = [  # a format's first key is its type: the format itself
        _row(f"`{kind}`", f"`{key.name}`", key.allowed(), key.default_text(), key.help)
        for kind, keys in FORMAT.items()
        for key in keys[1:]
    ]
    return "\n".join(
        [
            "The league file's keys:",
            "",
            *header,
            *league_rows,
            "",
            "Each entry of `bots` (exactly one of `command`, `address` and `path`):",
            "",
            *header,
            *_key_rows(BOT),
            "",
            "Each format's keys, after its `type`:",
            "",
            _row("format", "key", "value", "default", "what it is"),
            "|---|---|---|---|---|",
            *format_rows,
        ]
    )


def markdown_limits() -> str:
    """The table of the resource limits, for docs/leagues.md."""
    rows = [_row(f"`{key.name}`", key.default_text(), key.help) for key in LIMITS]
    return "\n".join([_row("key", "default", "what it limits"), "|---|---|---|", *rows])


def example_index() -> str:
    """The key index that opens ``tournaments/league.example.yaml``: each key, what it takes and its default."""
    keys = [(key.name, key) for key in LEAGUE]
    width = max(len(name) for name, _ in keys)
    value_width = max(len(key.allowed()) for _, key in keys)
    return "\n".join(
        f"#   {name:<{width}}  {key.allowed():<{value_width}}  {key.default_text()}".rstrip() for name, key in keys
    )


def replace_between(text: str, markers: tuple[str, str], block: str, indent: str = "") -> str:
    """``text`` with what lies between the two marker lines replaced by ``block``."""
    begin, end = markers
    start = text.index(begin) + len(begin)
    stop = text.index(end, start)
    return text[:start] + "\n" + block + "\n" + indent + text[stop:]


def written_docs(text: str) -> str:
    """docs/leagues.md's ``text`` with its generated tables made afresh."""
    text = replace_between(text, KEY_TABLES, markdown_keys())
    return replace_between(text, LIMITS_TABLE, _indented(markdown_limits(), "  "), indent="  ")


def written_example(text: str) -> str:
    """The example league's ``text`` with its key index made afresh."""
    return replace_between(text, EXAMPLE_INDEX, example_index())


def _indented(text: str, indent: str) -> str:
    return "\n".join(indent + line for line in text.split("\n"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m referee.leaguefile.config.keys", description=__doc__.split("\n")[0]
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--markdown", action="store_true", help="print the key tables of docs/leagues.md")
    group.add_argument("--example", action="store_true", help="print the key index of league.example.yaml")
    group.add_argument("--write", action="store_true", help="write both into their files")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown_keys() + "\n\n" + markdown_limits())
    elif args.example:
        print(example_index())
    else:
        DOCS.write_text(written_docs(DOCS.read_text()))
        EXAMPLE.write_text(written_example(EXAMPLE.read_text()))
        print(f"wrote {DOCS.relative_to(ROOT)} and {EXAMPLE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
