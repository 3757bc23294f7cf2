"""``async with`` for the objects that own connections, processes or a run.

A Host, a Run, a ``WebFetch``, a model transport and an adapter toolbox each hold something that
must be let go (pooled connections, calls in flight, what a run kept), and each lets it go in
``aclose()``. Their ``async with`` is always the same two lines around it, so it lives here once:
entering returns the object, leaving closes it, whatever ended the block.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["AsyncClosing"]


class AsyncClosing:
    """A base whose ``async with`` block ends in :meth:`aclose`."""

    __slots__ = ()

    async def aclose(self) -> None:
        """Let go of what the object holds; calling it again does nothing."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
