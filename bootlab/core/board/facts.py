"""What a board showed: `BoardFacts` read from a boot log and the U-Boot environment.

`facts_from_log` reads the boot log (through the same milestones as the phase table) and the
environment: was the delay loop calibrated or skipped, the `lpj` it found, the root filesystem
type, the kernel image size and how it was read, the kernel command line. Whether a setting
applies (`applicability`) and what applying it types (`plan`) are decided from these facts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bootlab.core.analysis.bootlog import BootLog, read_boot
from bootlab.core.analysis.phases import Milestone
from bootlab.core.analysis.pipeline import Analysis
from bootlab.core.board.cmdline import Cmdline, Target, locate_bootargs


@dataclass(frozen=True)
class BoardFacts:
    """What a boot log and the U-Boot environment tell about a board."""

    env: dict[str, str] = field(default_factory=dict, hash=False)
    hush: bool = True
    """U-Boot reads commands with hush (else the simple parser)."""
    lines: tuple[str, ...] = ()
    """The last boot's messages (without stamps); only milestone lines for an Analysis."""
    milestones: frozenset[str] = frozenset()
    stages: frozenset[str] = frozenset()
    """The boot stages the log reached (`profiles.STAGES`): what it can have shown yet."""
    calibrate: str | None = None
    """The "Calibrating delay loop" line."""
    lpj: int | None = None
    calibration_skipped: bool = False
    """The kernel skipped the delay loop by itself (timer-based delay): lpj= saves nothing."""
    lpj_preset: bool = False
    """lpj= was on the command line ("preset value")."""
    rootfs_type: str | None = None
    image_bytes: int | None = None
    """The kernel image's "Data Size"."""
    image_format: Literal["legacy", "fit"] | None = None
    loaded_bytes: int | None = None
    """Bytes of the last load before the kernel started ("N bytes read")."""
    loaded_blocks: int | None = None
    """Blocks of that load when it was an `mmc read`."""
    kernel_cmdline: str | None = None
    """The "Kernel command line:" the kernel printed."""

    def with_env(self, env: Mapping[str, str]) -> BoardFacts:
        """The same facts with another environment."""
        return replace(self, env=dict(env))

    @property
    def target(self) -> Target:
        """Where the kernel command line comes from."""
        return locate_bootargs(self.env)

    def cmdline(self) -> Cmdline:
        """The command line in force: from the environment, else as the kernel printed it."""
        return Cmdline.parse(self.target.cmdline(self.env, self.kernel_cmdline))


def _int(value: int | float | str | None) -> int | None:
    return value if isinstance(value, int) else None


def facts_from_log(log: str | Sequence[str] | BootLog | Analysis | None,
                   env: Mapping[str, str] | None = None, hush: bool = True) -> BoardFacts:
    """Learn a board's facts from a boot log and its environment.

    Args:
        log: the console text (a string or its lines), its last boot (`bootlog.read_boot`),
            an `Analysis` of it (then only the milestones' lines are known), or None. With
            several boots, the last one counts.
        env: the U-Boot environment (`hush.parse_printenv`).
        hush: the board's U-Boot uses the hush parser.
    """
    milestones: list[Milestone] = []
    lines: list[str] = []
    if isinstance(log, Analysis):
        milestones = log.boots[-1].milestones if log.boots else []
        lines = [m.text for m in milestones]
    elif log is not None:
        boot = log if isinstance(log, BootLog) else read_boot(log)
        milestones = list(boot.milestones)
        lines = [line.message for line in boot.lines]
    first: dict[str, Milestone] = {}
    last: dict[str, Milestone] = {}
    for milestone in milestones:
        first.setdefault(milestone.id, milestone)
        last[milestone.id] = milestone
    facts: dict[str, Any] = {}
    calibrate = first.get("calibrate")
    if calibrate is not None:
        preset = "preset" in calibrate.text
        facts.update(calibrate=calibrate.text, lpj=_int(calibrate.values.get("lpj")),
                     lpj_preset=preset,
                     calibration_skipped="(skipped)" in calibrate.text and not preset)
    if "image_info" in first:
        facts["image_bytes"] = _int(first["image_info"].values.get("image_bytes"))
    if "kernel_loaded" in last:
        values = last["kernel_loaded"].values
        facts.update(loaded_bytes=_int(values.get("bytes")),
                     loaded_blocks=_int(values.get("blocks")))
    facts["rootfs_type"] = _rootfs_type(first.get("root_mounted"))
    facts["image_format"] = _image_format(lines, first.get("kernel_verified"))
    for line in lines:
        if line.startswith("Kernel command line: "):
            facts["kernel_cmdline"] = line[len("Kernel command line: "):].strip()
    return BoardFacts(env=dict(env or {}), hush=hush, lines=tuple(lines),
                      milestones=frozenset(first),
                      stages=frozenset(m.stage for m in milestones), **facts)


def _rootfs_type(mounted: Milestone | None) -> str | None:
    if mounted is None:
        return None
    fstype = mounted.values.get("fstype")
    if isinstance(fstype, str):
        return fstype
    found = re.search(r"\b(EXT[234])-fs\b|\b(UBIFS)\b", mounted.text)
    return (found.group(1) or found.group(2)).lower() if found else None


def _image_format(lines: Sequence[str],
                  verified: Milestone | None) -> Literal["legacy", "fit"] | None:
    for line in lines:
        if "Legacy Image" in line:
            return "legacy"
        if "FIT Image" in line or "FIT image" in line:
            return "fit"
    if verified is not None:
        if "Hash Integrity" in verified.text:
            return "fit"
        if "Checksum" in verified.text:
            return "legacy"
    return None
