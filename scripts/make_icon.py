"""Draw the extension's icon (extension/images/icon.png, 128x128): three usage bars, green,
yellow and red, against a cut line, the picture of a budget. Pure Python (zlib), so the
asset can be redrawn anywhere: python scripts/make_icon.py"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIZE = 128
RADIUS = 22
BACKGROUND = (30, 42, 58)
TRACK = (58, 74, 94)
CUT = (236, 240, 245)
# (top, length, colour) of each bar; the cut is at x = CUT_X.
BARS = [(30, 62, (76, 175, 80)), (56, 84, (255, 193, 7)), (82, 100, (229, 57, 53))]
LEFT, HEIGHT, CUT_X = 18, 16, 94


def pixel(x: int, y: int) -> tuple[int, int, int, int]:
    # Rounded corners: transparent outside the quarter circles.
    cx = min(max(x, RADIUS), SIZE - 1 - RADIUS)
    cy = min(max(y, RADIUS), SIZE - 1 - RADIUS)
    if (x - cx) ** 2 + (y - cy) ** 2 > RADIUS**2:
        return (0, 0, 0, 0)
    if CUT_X <= x < CUT_X + 3 and 22 <= y < 106:
        return (*CUT, 255)
    for top, length, colour in BARS:
        if top <= y < top + HEIGHT and LEFT <= x < SIZE - LEFT:
            return (*(colour if x < LEFT + length else TRACK), 255)
    return (*BACKGROUND, 255)


def png(width: int, height: int) -> bytes:
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


if __name__ == "__main__":
    out = Path(__file__).resolve().parent.parent / "extension" / "images" / "icon.png"
    out.write_bytes(png(SIZE, SIZE))
    print(f"wrote {out}")
