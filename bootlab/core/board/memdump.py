"""Files read back through U-Boot's console: a `md.b` hex dump to bytes, and a boot script's text.

Before a run bootlab reads the files a board boots from (`boot.scr`, `extlinux.conf`) at the
U-Boot prompt: `load IFACE DEV:PART ADDR PATH` puts one in memory ("N bytes read") and
`md.b ADDR N` prints it as lines of `ADDRESS: hh hh ... hh  ascii`. `parse_md` turns those lines
back into the bytes, checking that the addresses follow on; `script_text` takes the text out of
a legacy script image (`mkimage -T script`: 64-byte header, a table of image lengths ending in a
zero word, then the script) or returns a plain text file as it is; `with_script_text` is its
inverse for an edit: the same file holding another text (a script image rebuilt with its
lengths and both CRCs, as `mkimage` makes it; a plain file is the text itself).
"""

from __future__ import annotations

import re
import zlib

_MD_LINE = re.compile(r"^\s*([0-9a-fA-F]{4,16}):((?: [0-9a-fA-F]{2})+)")
LEGACY_MAGIC = 0x27051956
"""First word of a legacy U-Boot image (`mkimage -A ... -T script`)."""
_HEADER = 64
_TYPE_SCRIPT = 6
_FIT_MAGIC = b"\xd0\x0d\xfe\xed"


def parse_md(text: str) -> tuple[int, bytes]:
    """The start address and bytes of a `md.b` dump (other lines, e.g. the echo, are skipped).

    Raises:
        ValueError: no dump lines, or a line does not start where the previous one ended.
    """
    start: int | None = None
    data = bytearray()
    for line in text.splitlines():
        found = _MD_LINE.match(line)
        if found is None:
            continue
        address = int(found.group(1), 16)
        if start is None:
            start = address
        elif address != start + len(data):
            raise ValueError(f"md.b dump: line at {address:#x} does not follow "
                             f"{start + len(data):#x} (a line was lost or garbled)")
        data += bytes.fromhex(found.group(2))
    if start is None:
        raise ValueError("no md.b dump lines in the output")
    return start, bytes(data)


def script_text(data: bytes) -> str | None:
    """The text of a boot script file: a legacy script image's script, or a plain text file
    as it is; None for other images (a FIT-format script, a kernel)."""
    if len(data) >= _HEADER and int.from_bytes(data[:4], "big") == LEGACY_MAGIC:
        if data[30] != _TYPE_SCRIPT:
            return None
        body = data[_HEADER:_HEADER + int.from_bytes(data[12:16], "big")]
        offset = 0
        lengths: list[int] = []
        while offset + 4 <= len(body):
            length = int.from_bytes(body[offset:offset + 4], "big")
            offset += 4
            if length == 0:
                break
            lengths.append(length)
        if not lengths:
            return None
        return body[offset:offset + lengths[0]].decode("latin-1")
    if data.startswith(_FIT_MAGIC) or b"\0" in data:
        return None
    return data.decode("latin-1")


def with_script_text(data: bytes, text: str) -> bytes | None:
    """The file `data` (as `script_text` reads it) holding `text` instead: a legacy script
    image keeps its header fields (name, architecture, time) with new lengths and CRCs; a
    plain text file is `text`. None for a file `script_text` cannot read."""
    if script_text(data) is None:
        return None
    body = text.encode("latin-1")
    if not (len(data) >= _HEADER and int.from_bytes(data[:4], "big") == LEGACY_MAGIC):
        return body
    payload = len(body).to_bytes(4, "big") + bytes(4) + body
    header = bytearray(data[:_HEADER])
    header[4:8] = bytes(4)
    header[12:16] = len(payload).to_bytes(4, "big")
    header[24:28] = zlib.crc32(payload).to_bytes(4, "big")
    header[4:8] = zlib.crc32(bytes(header)).to_bytes(4, "big")
    return bytes(header) + payload
