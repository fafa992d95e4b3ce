"""Pages made on demand, kept once made: a popular replay is built and compressed once, not at every visit.

The cache is bounded by bytes and forgets the page used longest ago first. A page is kept under its name and the
version of what it was made from (a game log's inode, size and modification time), so a log written again is
made again. Visitors who ask for a page while it is being made wait for that one making.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable

DEFAULT_BYTES = 64 * 2**20  # some 600 replay pages of a long game


class PageCache:
    """Pages by name, each made once for its version, the least recently used forgotten past ``max_bytes``."""

    def __init__(self, max_bytes: int = DEFAULT_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.pages: OrderedDict[str, tuple[Hashable, bytes]] = OrderedDict()
        self.made = 0  # pages made, for the tests and the bench
        self._making: dict[tuple[str, Hashable], asyncio.Future[bytes]] = {}

    async def get(self, name: str, version: Hashable, make: Callable[[], Awaitable[bytes]]) -> bytes:
        """The page ``name`` at ``version``: kept, being made (then waited for), or made now by ``make``."""
        kept = self.pages.get(name)
        if kept is not None and kept[0] == version:
            self.pages.move_to_end(name)
            return kept[1]
        key = (name, version)
        making = self._making.get(key)
        if making is not None:
            return await asyncio.shield(making)
        making = self._making[key] = asyncio.get_running_loop().create_future()
        try:
            page = await make()
        except asyncio.CancelledError:
            making.cancel()
            raise
        except Exception as error:
            making.set_exception(error)
            making.exception()  # retrieved: the waiters, if any, raise it; none is left unread
            raise
        finally:
            del self._making[key]
        making.set_result(page)
        self.made += 1
        self._keep(name, version, page)
        return page

    def _keep(self, name: str, version: Hashable, page: bytes) -> None:
        if len(page) > self.max_bytes:
            return
        old = self.pages.pop(name, None)
        if old is not None:
            self.size -= len(old[1])
        self.pages[name] = (version, page)
        self.size += len(page)
        while self.size > self.max_bytes:
            _, (_, forgotten) = self.pages.popitem(last=False)
            self.size -= len(forgotten)
