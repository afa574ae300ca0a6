"""A reply body read in bounded steps: decompressed here, refused past a byte limit.

httpx decompresses each received chunk in one call, so 64 KB of a gzip bomb can become
64 MB at once. :class:`BoundedBody` takes the raw chunks and asks zlib for at most one
byte past the limit, and at most :data:`STEP_BYTES`, per step (``decompress(data,
max_length)``), so memory stays within the limit whatever the compression ratio.
"""

from __future__ import annotations

import zlib

#: The content codings asked for; both are decoded by :class:`BoundedBody`.
ACCEPTED_ENCODINGS = "gzip, deflate"
#: Most bytes one decompression step yields (zlib may allocate twice a step while it works).
STEP_BYTES = 2**20


class ReplyRefused(Exception):
    """A reply that retrying would not fix (too large, an encoding not asked for); the message says why."""


class PastDeadline(Exception):
    """The request's deadline passed before the whole reply arrived."""


class BoundedBody:
    """The bytes of a reply, decompressed a bounded step at a time and refused past ``limit``."""

    def __init__(self, encoding: str, limit: int):
        coding = encoding.strip().lower()
        if coding in ("", "identity"):
            self._decoder = None
        elif coding in ("gzip", "x-gzip", "deflate"):
            self._decoder = zlib.decompressobj(wbits=32 + zlib.MAX_WBITS)  # 32+: a gzip or zlib header
        else:
            raise ReplyRefused(f"answered in the content encoding '{coding[:40]}', which was not asked for")
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = self._raw_size = 0

    def _keep(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self.limit:
            raise ReplyRefused(f"answered with more than {self.limit:,} bytes (decompressed)")
        self._parts.append(data)

    def feed(self, raw: bytes) -> None:
        """Add the next chunk as received; raises :class:`ReplyRefused` past the limit."""
        # Raw bytes count too: data after the end of a gzip stream piles up in ``unused_data``.
        self._raw_size += len(raw)
        if self._raw_size > self.limit:
            raise ReplyRefused(f"answered with more than {self.limit:,} bytes")
        if self._decoder is None:
            return self._keep(raw)
        try:
            while raw:
                # At most STEP_BYTES, and one byte past the limit, per step; the rest waits in unconsumed_tail.
                self._keep(self._decoder.decompress(raw, min(STEP_BYTES, self.limit - self._size + 1)))
                raw = self._decoder.unconsumed_tail
        except zlib.error:
            raise ReplyRefused("answered with a compressed body that does not decompress") from None

    def finish(self) -> bytes:
        """The whole body, decompressed."""
        if self._decoder is not None:
            self._keep(self._decoder.flush())
        return b"".join(self._parts)
