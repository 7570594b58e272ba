#!/usr/bin/env python3
"""Counts the distinct pixel values of a PNG screenshot (stdlib only).

Usage: png_pixels.py FILE.png [STOP] -> prints the count (decoding stops once it
reaches STOP, which keeps a pure-Python decoder quick). A blank page has a
handful of values; a page with charts has hundreds. Reads 8-bit RGB/RGBA,
non-interlaced PNGs (what Chromium writes).
"""
import struct
import sys
import zlib


def decode(path):
    """Returns (width, height, bytes per pixel, rows of raw pixel bytes), the rows
    a generator."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA non-interlaced PNGs")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    return width, height, bpp, _rows(raw, height, stride, bpp)


def _rows(raw, height, stride, bpp):
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        yield bytes(line)
        prev = line


def distinct(path, stop=None):
    width, _, bpp, rows = decode(path)
    seen = set()
    for line in rows:
        for x in range(0, width * bpp, bpp):
            seen.add(line[x : x + bpp])
        if stop is not None and len(seen) >= stop:
            break
    return len(seen)


if __name__ == "__main__":
    print(distinct(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None))
