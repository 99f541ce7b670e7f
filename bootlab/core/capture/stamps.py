"""Timestamps printed by the device itself: kernel printk times and bootloader stamps.

Forms read at the start of a line (after an optional `<N>` syslog level, as `dmesg -r` prints):

- `[    1.234567] ...`                      printk time (always six decimals)
- `[    1.234567][    T1] ...`               with CONFIG_PRINTK_CALLER (task or `C0` cpu id)
- `[    1.234567][0] ...`                    vendor kernels adding the cpu (Qualcomm, AVM)
- `[    1.234567] [0:  swapper/0:    1] ...` vendor kernels adding `[cpu: task: pid]` (Samsung,
                                             Rockchip: one or two spaces before it)
- `[    1.234567@0] ...`                     Amlogic kernels: the cpu inside the brackets
- `[    1.234567] (0)[0:swapper]...`         MediaTek kernels: `(cpu)[pid:task]`, no space
- `[   5.878] ...`, `[0001.261] ...`        bootloader stamps (Rockchip, Tegra, TF-A builds)
- `MESS:00:00:05.383436:0: ...`             Raspberry Pi firmware (start.elf), time since
                                             power-on; a printk time may follow it directly

Six decimals make a kernel time; any other form is a bootloader stamp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STAMP = re.compile(
    r"(?:<\d{1,2}>)?\[\s{0,12}(\d{1,8})\.(\d{1,9})(?:@\d{1,3})?\]"
    r"(?:\s{0,2}\[\s{0,8}(?:[TC]\d{1,7}|\d{1,4}(?::[^\]\n]{0,40})?)\]|\s?\(\d{1,3}\)\[\d{1,7}:[^\]\n]{0,40}\])?"
    r" ?"
)
_FIRMWARE = re.compile(r"MESS:(\d\d):(\d\d):(\d\d\.\d{1,9}):\d{1,2}: ?")


@dataclass(frozen=True, slots=True)
class Stamp:
    """A timestamp found at the start of a line."""

    kernel_s: float | None
    """printk time in seconds, when the line is a kernel message."""
    boot_s: float | None
    """A bootloader-printed stamp in seconds."""
    end: int
    """Index in the text where the message after the stamp begins."""


NO_STAMP = Stamp(None, None, 0)


def parse_stamp(text: str) -> Stamp:
    """Read a printk time or bootloader stamp at the start of `text`.

    Args:
        text: a cleaned line.

    Returns:
        The stamp, or NO_STAMP when the line starts with none.
    """
    if text.startswith("MESS:"):
        firmware = _FIRMWARE.match(text)
        if firmware is None:
            return NO_STAMP
        hours, minutes, seconds = firmware.groups()
        boot_s = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
        kernel = _printk(text, firmware.end())
        if kernel is not None and kernel.kernel_s is not None:
            return Stamp(kernel.kernel_s, boot_s, kernel.end)
        return Stamp(None, boot_s, firmware.end())
    return _printk(text, 0) or NO_STAMP


def _printk(text: str, start: int) -> Stamp | None:
    if not text.startswith(("[", "<"), start):
        return None
    match = _STAMP.match(text, start)
    if match is None:
        return None
    whole, frac = match.group(1), match.group(2)
    seconds = float(f"{whole}.{frac}")
    if len(frac) == 6:
        return Stamp(seconds, None, match.end())
    return Stamp(None, seconds, match.end())
