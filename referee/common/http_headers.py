"""The HTTP headers the referee's web pages share: one owner for each, whichever application answers.

``referee serve`` (:mod:`referee.apps.site`) and a person's seat in a browser (:mod:`referee.apps.human.browser`)
both answer with them. Each is read-only: a route that adds to one makes its own (``{**NO_STORE, ...}``), so that
no answer changes what another sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# What is kept by no cache, shared or not: what changes as games are played (pages, screens, records, streams),
# and an author's own answers, which no cache between them and the site may hold for the next visitor.
NO_STORE: Mapping[str, str] = MappingProxyType({"Cache-Control": "no-store"})
