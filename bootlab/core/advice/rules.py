"""What to change next: recommendations with a predicted saving, read from a boot's own log.

Each rule looks for one known cost in a boot — the autoboot countdown, console output at the
baud rate, delay-loop calibration, image checks, load progress output, an oversized kernel read,
decompression, waiting for the root device, a UBI scan, a JFFS2 scan, slow initcalls, link
negotiation, userland — measures it on the unified timeline (`analysis/clocks.py`) and
predicts what removing it saves, quoting the lines it is based on. Predictions are computed
from the log; where a saving also depends on the board (how much faster fastmap attaches,
say), the detail says which published measurement the estimate leans on. Recommendations are
ranked by predicted saving; each names the setting whose A/B run would check it, and
`predictions.check_predictions` puts the measured difference of such a run beside the
prediction. Console output is costed through the UART's transmit buffer (`uart.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from bootlab.core.advice.chain import slowest_on_chain
from bootlab.core.advice.recommendation import Recommendation, rank
from bootlab.core.advice.uart import HARDWARE_UART, ConsoleWrite, Uart, console_stall
from bootlab.core.analysis import initcalls
from bootlab.core.analysis.clocks import BITS_PER_BYTE, BootTimeline, baud_of, boot_lines, unify
from bootlab.core.analysis.phases import Boot, Milestone, ParsedLine
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.board.kernel_read import UIMAGE_HEADER, trimmed_read_size
from bootlab.core.capture.sources import Source

MIN_SAVING_MS = 10.0
"""Predictions below this are left out: lost in boot-to-boot noise."""
PACE_WINDOW_S = 0.1
PACE_SLACK_S = 0.016
"""A USB adapter may hold this much data back (the common 16 ms latency timer)."""
UNPACED = 1.5
"""A console delivering this many times what its baud rate carries is not a paced UART."""
EVIDENCE_CHARS = 120
TOP_INITCALLS = 5
JFFS2_SEED = (14.0, 2.85)
"""Seconds to mount a JFFS2 root without and with erase-block summaries, on one board."""
PROGRESS_SEED = (1.204, 0.832)
"""Seconds of a 1.2 MB NAND load with and without progress output, on one board."""


def _short(text: str) -> str:
    """A line's text cut to EVIDENCE_CHARS."""
    return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS - 1] + "…"


class _View:
    """One boot's lines, times and console facts, for the rules."""

    def __init__(self, source: Source, boot: Boot, lines: list[ParsedLine],
                 timeline: BootTimeline, uart: Uart) -> None:
        self.source = source
        self.boot = boot
        self.lines = lines
        self.timeline = timeline
        self.uart = uart
        self.baud, self.baud_known = baud_of(source)
        self.position = {line.number: i for i, line in enumerate(lines)}
        self.goal = "login" if boot.reached("login") else \
            (boot.milestones[-1].id if boot.milestones else "")

    def line(self, number: int) -> ParsedLine:
        """The line with this number."""
        return self.lines[self.position[number]]

    def after(self, line: ParsedLine, stamped: bool = False) -> ParsedLine | None:
        """The next non-blank line (with a printk time, if `stamped`)."""
        for other in self.lines[self.position[line.number] + 1:]:
            if other.message.strip() and (other.kernel_s is not None or not stamped):
                return other
        return None

    def wait_at(self, milestone_id: str
                ) -> tuple[Milestone, ParsedLine, ParsedLine, float] | None:
        """A milestone that starts a wait, its line, the next line, and the ms between them."""
        milestone = self.boot.reached(milestone_id)
        if milestone is None:
            return None
        line = self.line(milestone.line)
        nxt = self.after(line)
        waited = self.span_ms(line, nxt) if nxt else None
        return None if nxt is None or waited is None else (milestone, line, nxt, waited)

    def before(self, line: ParsedLine, skip: Callable[[ParsedLine], bool] | None = None
               ) -> ParsedLine | None:
        """The previous non-blank line not matched by `skip`."""
        for other in reversed(self.lines[:self.position[line.number]]):
            if other.message.strip() and not (skip and skip(other)):
                return other
        return None

    def span_ms(self, first: ParsedLine, last: ParsedLine) -> float | None:
        """Time from one line to another: by printk times when both have one."""
        if first.kernel_s is not None and last.kernel_s is not None:
            return (last.kernel_s - first.kernel_s) * 1000.0
        start, end = self.timeline.time(first), self.timeline.time(last)
        return None if start is None or end is None else (end - start) * 1000.0

    def end_of(self, line: ParsedLine) -> int:
        """Stream offset just after the line's newline."""
        i = self.position[line.number]
        return self.lines[i + 1].offset if i + 1 < len(self.lines) else len(self.source.data)

    def console_ms(self, size: int) -> float:
        """Milliseconds `size` bytes take on the wire at the console's baud rate."""
        return size * BITS_PER_BYTE * 1000.0 / self.baud

    def unpaced_rate(self) -> float | None:
        """Bytes/s at its fastest, if this console delivered more than its baud rate carries
        (its UART is faster than the board can print), else None."""
        clock = self.timeline.clock
        start = self.lines[0].offset if self.lines else 0
        end = self.end_of(self.lines[-1]) if self.lines else 0
        slack = self.timeline.latency_ms / 1000.0 or PACE_SLACK_S
        rate = clock.peak_rate(start, end, PACE_WINDOW_S) if clock else None
        nominal = self.baud / BITS_PER_BYTE
        fast = rate is not None and \
            rate * PACE_WINDOW_S / (PACE_WINDOW_S + slack) > UNPACED * nominal
        return rate if fast else None

    def pace_note(self) -> str:
        """Why a console saving measured on this board may differ from the prediction."""
        rate = self.unpaced_rate()
        nominal = self.baud / BITS_PER_BYTE
        note = "" if self.baud_known else f" The baud rate is not recorded: {self.baud} assumed."
        if rate is not None:
            note += (f" This console delivered up to {rate / 1000:.0f} kB/s, more than "
                     f"{self.baud} baud carries ({nominal / 1000:.1f} kB/s): its UART is "
                     "faster than the board can print (QEMU's PL011 models no baud rate), so "
                     "an A/B run here measures a smaller saving than a real UART would give.")
        return note

    def pace_caveat(self) -> str:
        """The assumption of a prediction costed at the baud rate that this console
        contradicts, as a clause ('' when it is paced by its baud rate)."""
        rate = self.unpaced_rate()
        if rate is None:
            return ""
        return (f"the prediction assumes the console is limited by its baud rate ({self.baud} "
                f"baud, {self.baud / BITS_PER_BYTE / 1000:.1f} kB/s), but this console wrote "
                f"up to {rate / 1000:.0f} kB/s, faster than its baud")

    def evidence(self, *lines: ParsedLine | None) -> list[tuple[int, str]]:
        """(number, text) of the given lines, each once, in order."""
        numbered = {ln.number: _short(ln.text) for ln in lines if ln is not None}
        return sorted(numbered.items())

    def rec(self, ident: str, title: str, predicted: float, evidence: list[tuple[int, str]],
            setting: str | None, detail: str, variant: str | None = None,
            persist: bool = False, bound: float | None = None,
            caveat: str = "") -> Recommendation:
        """A recommendation from this boot, measured at its goal milestone."""
        return Recommendation(ident, title, predicted, evidence, setting, detail,
                              self.goal, variant, persist, str(self.source.path),
                              bound_ms=bound, caveat=caveat)


Rule = Callable[[_View], Recommendation | None]


def _bootdelay(view: _View) -> Recommendation | None:
    found = view.wait_at("autoboot")
    if found is None:
        return None
    _, prompt, following, waited = found
    if "autoboot" not in prompt.message.lower():
        return view.rec("menu_timeout", "Boot menu timeout", waited,
                        view.evidence(prompt, following), None,
                        f"The boot menu waited {waited:.0f} ms before booting its default "
                        "entry; a shorter menu timeout (or none) saves it.")
    return view.rec("bootdelay", "Autoboot countdown", waited, view.evidence(prompt, following),
                    "bootdelay",
                    f"U-Boot waited {waited:.0f} ms for a key before it booted. bootdelay=0 "
                    "still checks for a key once (bootlab can stop it); the countdown acts "
                    "before the prompt, so measure it with --persist.",
                    "bootdelay0:bootdelay=0", persist=True)


def _console_writes(view: _View, first: ParsedLine, init: ParsedLine, last: ParsedLine
                    ) -> list[ConsoleWrite]:
    """The lines after `first` up to `last` as console writes, each at the time it was printed.

    Kernel messages are the lines up to init and every printk-stamped one after; a stamped line
    is placed by its printk time on the host clock, and those printed before the console was
    enabled (when the first kernel message arrived) enter the buffer together at that time.
    """
    body = view.lines[view.position[first.number] + 1:view.position[last.number] + 1]
    fit = view.timeline.fit
    enabled = next((ln.host_s for ln in body if ln.kernel_s is not None), None)
    writes: list[ConsoleWrite] = []
    t = 0.0
    for line in body:
        placed = view.timeline.time(line)
        if line.kernel_s is not None and fit is not None:
            placed = fit.offset_s + line.kernel_s
            if enabled is not None:
                placed = max(placed, enabled)
        t = t if placed is None else placed
        kernel = line.kernel_s is not None or line.number < init.number
        writes.append(ConsoleWrite(t, view.end_of(line) - line.offset, kernel))
    return writes


def _kernel_console(view: _View) -> Recommendation | None:
    started = view.boot.reached("starting_kernel")
    init = view.boot.reached("init") or view.boot.reached("kernel_done")
    goal = view.boot.reached(view.goal)
    if view.source.kind == "dmesg" or started is None or init is None or goal is None \
            or init.line <= started.line:
        return None
    first, last = view.line(started.line), view.line(init.line)
    writes = _console_writes(view, first, last, view.line(max(goal.line, init.line)))
    kernel = [w for w in writes if w.kernel]
    size = sum(w.size for w in kernel)
    bound = view.console_ms(size)
    stalled = view.unpaced_rate() is None
    cost = console_stall(writes, view.baud, view.uart, stalled) * 1000.0
    times = ("this paced console's waits are in the printk times already, so they are "
             "replayed as recorded" if stalled else
             "the printk times hold no console waits, so each wait delays what follows")
    end = _short(view.line(goal.line).text)
    return view.rec("console", "Kernel console output", cost, view.evidence(first, last),
                    "quiet",
                    f"{size} bytes of kernel messages ({len(kernel)} lines) reach the console "
                    f"between `{_short(first.text)}` and `{end}`; at {view.baud} baud each "
                    f"byte takes {BITS_PER_BYTE} bits: {bound:.0f} ms if the kernel waited for "
                    f"every byte, the upper bound. Replayed through {view.uart.describe()}, "
                    f"the kernel waits {cost:.0f} ms ({times}; the messages it printed before "
                    "the console was enabled enter at once). `quiet` (loglevel 4) keeps them "
                    "off the console but for errors (the console does not show a line's "
                    "level); the log still has them (dmesg)." + view.pace_note(),
                    "quiet", bound=bound, caveat=view.pace_caveat())


def _is_progress(line: ParsedLine) -> bool:
    """A line of load progress hashes (`#####`, TFTP's `Loading: ####`)."""
    body = line.message.strip().removeprefix("Loading:").replace(" ", "").replace("\t", "")
    return len(body) >= 8 and body.count("#") >= 0.8 * len(body)


def _progress_lines(view: _View, end: int) -> list[ParsedLine]:
    """The bootloader's progress lines before line index `end`."""
    return [line for line in view.lines[:end] if _is_progress(line)]


def _bootloader_end(view: _View) -> int:
    started = view.boot.reached("starting_kernel")
    return view.position[started.line] if started else len(view.lines)


def _progress(view: _View) -> Recommendation | None:
    hashes = _progress_lines(view, _bootloader_end(view))
    if not hashes:
        return None
    size = sum(view.end_of(line) - line.offset for line in hashes)
    cost = view.console_ms(size)
    done = view.after(hashes[-1])
    load = view.span_ms(view.before(hashes[0]) or hashes[0], done) if done else None
    if load is not None:
        cost = min(cost, load)
    before, after = PROGRESS_SEED
    return view.rec("progress", "Bootloader load progress output", cost,
                    view.evidence(hashes[0], hashes[-1], done), None,
                    f"{len(hashes)} progress lines ({size} bytes) are printed while the image "
                    f"loads: {view.console_ms(size):.0f} ms at {view.baud} baud"
                    + (f", during a load of {load:.0f} ms" if load is not None else "")
                    + ". Build the bootloader without the progress output (or a quieter load "
                    "command); on one board that cut a 1.2 MB NAND load from "
                    f"{before:.3f} s to {after:.3f} s." + view.pace_note(),
                    caveat=view.pace_caveat())


def _bootloader_console(view: _View) -> Recommendation | None:
    started = view.boot.reached("starting_kernel")
    if started is None or not view.lines:
        return None
    end = view.position[started.line]
    progress = sum(view.end_of(ln) - ln.offset for ln in _progress_lines(view, end))
    size = view.line(started.line).offset - view.lines[0].offset - progress
    cost = view.console_ms(size)
    first = next((ln for ln in view.lines if ln.message.strip()), view.lines[0])
    return view.rec("bootloader_console", "Bootloader console output", cost,
                    view.evidence(first, view.line(started.line)), "silent",
                    f"The bootloader prints {size} bytes before `Starting kernel`"
                    + (" (besides its progress output)" if progress else "")
                    + f": {cost:.0f} ms at {view.baud} baud. A silent console (U-Boot "
                    "CONFIG_SILENT_CONSOLE with silent=1) skips them, but hides the autoboot "
                    "prompt too." + view.pace_note(), "silent", caveat=view.pace_caveat())


def _read_trim(view: _View) -> Recommendation | None:
    loaded, info = view.boot.reached("kernel_loaded"), view.boot.reached("image_info")
    if loaded is None or info is None or "bytes read in" in loaded.text:
        return None  # a file load reads just the file
    if any("FIT Image" in ln.message or "FIT image" in ln.message for ln in view.lines):
        return None  # the read must cover the whole FIT, not the kernel's Data Size
    image = info.values.get("image_bytes")
    count = loaded.values.get("bytes")
    blocks = loaded.values.get("blocks")
    read = count if isinstance(count, int) else \
        blocks * 512 if isinstance(blocks, int) else None
    if not isinstance(image, int) or read is None or image + UIMAGE_HEADER > read:
        return None
    trimmed = trimmed_read_size(image)
    if isinstance(blocks, int):
        trimmed = -(-trimmed // 512) * 512
    if trimmed >= read:
        return None
    line = view.line(loaded.line)
    command = view.before(line, skip=_is_progress)
    took = view.span_ms(command, line) if command else None
    if took is None:
        return None
    saved = took * (read - trimmed) / read
    return view.rec("read_trim", "Kernel read larger than the image", saved,
                    view.evidence(command, line, view.line(info.line)), "read_trim",
                    f"The bootloader reads {read} bytes ({read:#x}) in {took:.0f} ms, but the "
                    f"image is {image} bytes: {trimmed} bytes ({trimmed:#x}, the image and its "
                    "header padded to 2048-byte pages plus a spare page) would do, "
                    f"{read - trimmed} bytes less at the same rate.", "read_trim")


_DONE = re.compile(rb"\bdone\b")


def _decompression(view: _View) -> Recommendation | None:
    milestone = view.boot.reached("decompressed")
    placed = view.boot.reached("kernel_uncompressed")
    if milestone is not None:
        line = view.line(milestone.line)
        data = view.source.data[line.offset:view.end_of(line)]
        found = _DONE.search(data)
        clock = view.timeline.clock
        end = clock.byte_time(line.offset + found.start()) if clock and found else None
        start = view.timeline.time(line)
        nxt = view.after(line)
        took = (end - start) * 1000.0 if end is not None and start is not None else \
            (view.span_ms(line, nxt) if nxt else None)
        by = "the kernel's decompressor"
    elif placed is not None and "Uncompressing" in placed.text:
        line = view.line(placed.line)
        nxt = view.after(line)
        took = view.span_ms(line, nxt) if nxt else None
        by = "the bootloader"
    else:
        return None
    if took is None:
        return None
    return view.rec("decompression", "Kernel decompression", took,
                    view.evidence(line, view.after(line)), None,
                    f"{by.capitalize()} spends {took:.0f} ms decompressing the kernel. LZ4 "
                    "decompresses several times faster than gzip for an image about 10 % "
                    "bigger; LZO sits between them; an uncompressed image needs no time here but "
                    "is 2-3 times bigger to load, which pays only where storage reads fast. "
                    "The prediction is the whole decompression time: the upper bound.")


def _lpj(view: _View) -> Recommendation | None:
    milestone = view.boot.reached("calibrate")
    if milestone is None or "(skipped)" in milestone.text or "preset" in milestone.text:
        return None
    line = view.line(milestone.line)
    nxt = view.after(line, stamped=line.kernel_s is not None)
    took = view.span_ms(line, nxt) if nxt else None
    if took is None:
        return None
    lpj = milestone.values.get("lpj")
    return view.rec("lpj", "Delay loop calibration", took, view.evidence(line, nxt), "lpj",
                    f"The kernel calibrated its delay loop for {took:.0f} ms (printk times). "
                    f"lpj={lpj} on the command line presets the value it found and skips the "
                    "calibration.", "lpj")


_VERIFY = re.compile(r"^\s*Verifying (?:Hash Integrity|Checksum) \.\.\.")


def _verify(view: _View) -> Recommendation | None:
    checks: list[tuple[ParsedLine, float]] = []
    for line in view.lines[:_bootloader_end(view)]:
        if _VERIFY.match(line.message):
            nxt = view.after(line)
            took = view.span_ms(line, nxt) if nxt else None
            if took is not None:
                checks.append((line, took))
    if not checks:
        return None
    total = sum(took for _, took in checks)
    each = ", ".join(f"line {ln.number}: {took:.0f} ms" for ln, took in checks)
    return view.rec("verify", "Image checksum / hash verification", total,
                    view.evidence(*(ln for ln, _ in checks)), "verify",
                    f"The bootloader checks its images for {total:.0f} ms ({each}; each from "
                    "the check's start to the next line). verify=no skips the checks, at the "
                    "cost of no longer catching a corrupted image before starting it.",
                    "verify")


def _root_wait(view: _View) -> Recommendation | None:
    found = view.wait_at("root_wait")
    if found is None:
        return None
    milestone, line, nxt, waited = found
    if "rootdelay" in milestone.values:
        return view.rec("rootdelay", "rootdelay sleep", waited, view.evidence(line, nxt),
                        "no_rootdelay",
                        f"rootdelay made the kernel sleep {waited:.0f} ms before mounting "
                        "root, ready or not. Drop it; add rootwait if the device comes late.",
                        "no_rootdelay")
    return view.rec("rootwait", "Waiting for the root device", waited, view.evidence(line, nxt),
                    None,
                    f"The kernel waited {waited:.0f} ms for the root device to appear "
                    "(rootwait). Probe its storage earlier: the driver built in rather than a "
                    "module, no deferred probe, the card or controller initialised sooner.")


_UBI_START = re.compile(r"^(?:ubi(\d+): attaching mtd(\d+)|UBI: attaching mtd(\d+) to ubi(\d+))")
_PEBS = re.compile(r"good PEBs: (\d+)")


def _ubi(view: _View) -> Recommendation | None:
    milestone = view.boot.reached("ubi_attached")
    if milestone is None:
        return None
    done = view.line(milestone.line)
    earlier = view.lines[:view.position[done.number]]
    start = next((ln for ln in reversed(earlier) if _UBI_START.match(ln.message)), None)
    if start is None or any("attached by fastmap" in ln.message for ln in view.lines):
        return None
    took = view.span_ms(start, done)
    if took is None:
        return None
    counted = next((ln for ln in view.lines if _PEBS.search(ln.message)), None)
    supported = any("fastmap pool size" in ln.message for ln in view.lines)
    how = ("boot once with ubi.fm_autoconvert=1 so UBI writes a fastmap" if supported else
           "enable CONFIG_MTD_UBI_FASTMAP and boot once with ubi.fm_autoconvert=1")
    saved, scan = took, "all its PEBs"
    found = _PEBS.search(counted.message) if counted else None
    if found is not None:
        pebs = int(found.group(1))
        pool = min(max(pebs // 100 * 5, 8), 256)  # the kernel's default fastmap pools
        rest = min(pool + pool // 2, pebs)
        saved = took * (1 - rest / pebs)
        scan = f"all {pebs} PEBs instead of the {rest} in fastmap's pools"
    evidence = view.evidence(start, done, counted)
    return view.rec("ubi_fastmap", "UBI attach by scanning", saved, evidence, None,
                    f"UBI took {took:.0f} ms to attach, scanning {scan}. Fastmap attaches in "
                    f"nearly constant time: {how}. The prediction is an upper bound (reading "
                    "the fastmap itself costs some time).")


_JFFS2_BANNER = re.compile(r"^(?:jffs2: version|JFFS2 version) 2\.")


def _jffs2(view: _View) -> Recommendation | None:
    milestone = view.boot.reached("root_mounted")
    if milestone is None or milestone.values.get("fstype") != "jffs2":
        return None
    mounted = view.line(milestone.line)
    start = view.before(mounted, skip=lambda ln: ln.message.lower().startswith("jffs2"))
    took = view.span_ms(start, mounted) if start else None
    if took is None:
        return None
    banner = next((ln for ln in view.lines if _JFFS2_BANNER.match(ln.message)), None)
    without, with_summary = JFFS2_SEED
    saved = took * (1 - with_summary / without)
    if banner is not None and "SUMMARY" not in banner.message:
        why = ("the kernel was built without CONFIG_JFFS2_SUMMARY, so it scans every node; "
               "enable it and add summaries to the image with sumtool")
    else:
        why = ("make sure the image carries erase-block summaries (sumtool) and the kernel "
               "reads them (CONFIG_JFFS2_SUMMARY)")
    return view.rec("jffs2_summary", "JFFS2 mount scan", saved,
                    view.evidence(banner, start, mounted), None,
                    f"Mounting the JFFS2 root took {took:.0f} ms: {why}. On one board summaries "
                    f"cut the mount from {without:g} s to {with_summary:g} s; the prediction "
                    "scales this mount by the same ratio.")


def _initcalls(view: _View) -> Recommendation | None:
    last = view.lines[-1].number if view.lines else 0
    calls = [c for c in initcalls.parse(view.source.data)
             if c.kind == "initcall" and view.boot.first_line <= c.line <= last]
    if not calls:
        return None
    slow = [c for c in initcalls.top(calls, TOP_INITCALLS) if c.duration_us >= 1000]
    if not slow:
        return None
    saved = initcalls.total_us(slow) / 1000.0
    names = ", ".join(f"{c.label} {c.duration_us / 1000:.0f} ms" for c in slow)
    return view.rec("initcalls", "Slow initcalls", saved,
                    view.evidence(*(view.line(c.line) for c in slow)), None,
                    f"The {len(slow)} slowest of {len(calls)} initcalls take {saved:.0f} ms of "
                    f"{initcalls.total_us(calls) / 1000:.0f} ms: {names}. Defer them (a module "
                    "loaded after boot, asynchronous probing), speed them up or drop the "
                    "driver. initcall_debug prints two lines per initcall, so this boot is "
                    "slower than a normal one.")


_LINK_UP = re.compile(r"(\S+): Link is Up - \d")
_LINK_START = ("configuring for", "PHY [", "Link is Down", "link is not ready", "NETDEV_UP")


def _link_start(view: _View, up: ParsedLine, interface: str) -> ParsedLine | None:
    """The last line before `up` where the interface was brought up (negotiation starts)."""
    return next((ln for ln in reversed(view.lines[:view.position[up.number]])
                 if interface in ln.message and any(s in ln.message for s in _LINK_START)),
                None)


def _autoneg(view: _View) -> Recommendation | None:
    login = view.boot.reached("login")
    for line in view.lines:
        match = _LINK_UP.search(line.message)
        if match is None or (login is not None and line.number > login.line):
            continue
        start = _link_start(view, line, match.group(1) + ":")
        waited = view.span_ms(start, line) if start else None
        if waited is None:
            continue
        return view.rec("autoneg", "Network link negotiation", waited,
                        view.evidence(start, line), None,
                        f"The link took {waited:.0f} ms to come up (autonegotiation) before "
                        "login. If the boot waits for it (ip= on the command line, DHCP before "
                        "login), bring the network up in the background, or fix speed and "
                        "duplex where the link partner allows.")
    return None


def _userland(view: _View) -> Recommendation | None:
    init, login = view.boot.reached("init"), view.boot.reached("login")
    if init is None or login is None or login.line <= init.line:
        return None
    first, last = view.line(init.line), view.line(login.line)
    steps = [ln for ln in view.lines[view.position[first.number]:view.position[last.number] + 1]
             if ln.message.strip()]
    total = view.span_ms(first, last)
    gaps = [(a, b, view.timeline.time(b), view.timeline.time(a)) for a, b in pairwise(steps)]
    timed = [(a, b, (tb - ta) * 1000.0) for a, b, tb, ta in gaps
             if ta is not None and tb is not None]
    if total is None or not timed:
        return None
    a, b, slowest = max(timed, key=lambda g: g[2])
    return view.rec("userland", "Init to login", slowest, view.evidence(first, a, b, last), None,
                    f"Userland takes {total:.0f} ms from init to the login prompt; the longest "
                    f"silent step is {slowest:.0f} ms, between line {a.number} and line "
                    f"{b.number}. Start that work later or in parallel, or make it faster.")


def _critical_unit(view: _View) -> Recommendation | None:
    return slowest_on_chain(view.boot, view.goal, str(view.source.path))


RULES: tuple[Rule, ...] = (_bootdelay, _kernel_console, _bootloader_console, _progress,
                           _read_trim, _decompression, _lpj, _verify, _root_wait, _ubi, _jffs2,
                           _initcalls, _autoneg, _userland, _critical_unit)


def advise(source: Source, analysis: Analysis,
           uart: Uart = HARDWARE_UART) -> list[Recommendation]:
    """Every boot's recommendations, ranked by predicted saving (console output costed
    through `uart`)."""
    timeline = unify(analysis, source)
    found: list[Recommendation] = []
    for joined, boot_timeline in zip(analysis.boots, timeline.boots, strict=True):
        boot = joined.on_console()  # the rules read their milestones' console lines
        view = _View(source, boot, boot_lines(source, analysis, boot), boot_timeline, uart)
        for rule in RULES:
            rec = rule(view)
            if rec is not None and rec.predicted_ms >= MIN_SAVING_MS:
                found.append(rec)
    return rank(found)
