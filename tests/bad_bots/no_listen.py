"""Runs but never binds its address: the referee waits for it in vain."""

from __future__ import annotations

import time

import _common

if __name__ == "__main__":
    _common.parse(_common.parser(__doc__))
    time.sleep(600)
