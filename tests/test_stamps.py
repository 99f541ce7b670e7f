"""Kernel printk times and bootloader stamps read from the start of a line."""

from __future__ import annotations

import pytest

from bootlab.core.capture.stamps import parse_stamp


@pytest.mark.parametrize(("text", "kernel", "boot", "rest"), [
    ("[    1.234567] Booting Linux", 1.234567, None, "Booting Linux"),
    ("[    0.000000][    T0] Booting Linux", 0.0, None, "Booting Linux"),
    ("[   12.345678][  C1] smp: Brought up", 12.345678, None, "smp: Brought up"),
    ("[    5.123456] [0:  swapper/0:    1] init: ok", 5.123456, None, "init: ok"),
    ("<6>[    1.500000] usb 1-1: new device", 1.5, None, "usb 1-1: new device"),
    ("[   5.878] U-Boot loader", None, 5.878, "U-Boot loader"),
    ("[0001.261] I> MB1 done", None, 1.261, "I> MB1 done"),
    ("[ 123456.000001] late", 123456.000001, None, "late"),
    ("no stamp here", None, None, "no stamp here"),
    ("[initramfs] /init started", None, None, "[initramfs] /init started"),
    ("[  OK  ] Started", None, None, "[  OK  ] Started"),
])
def test_forms(text: str, kernel: float | None, boot: float | None, rest: str) -> None:
    stamp = parse_stamp(text)
    assert stamp.kernel_s == kernel
    assert stamp.boot_s == boot
    assert text[stamp.end:] == rest
