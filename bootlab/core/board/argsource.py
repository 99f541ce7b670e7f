"""Where a board's kernel arguments come from, and whether the U-Boot environment can change them.

The kernel takes its command line from whatever wrote it last before it started:

- `bootargs` in the U-Boot environment, as it is (the QEMU board's factory setup);
- a `bootcmd` chain that rebuilds `bootargs` from other variables (`cmdline.locate_bootargs`);
- a U-Boot script (`boot.scr`) with its own `setenv bootargs`: unconditional (the script wins
  over the environment), or only when `bootargs` is unset (`if test -z "${bootargs}"; then
  setenv bootargs ...; fi`: a default, the environment still wins), or built from variables
  (`setenv bootargs ${bootargs} quiet`: changes go to those variables);
- distro boot's `extlinux.conf`, whose `append` line replaces `bootargs` (a label without one
  leaves `bootargs` as it is);
- the device tree's `/chosen/bootargs` (a FIT configuration's, or the firmware's), in force only
  when nothing above sets `bootargs`;
- a file a firmware reads: the Raspberry Pi's `cmdline.txt`, GRUB's `grub.cfg`.

`locate` decides from `printenv`, the last boot's log (U-Boot's distro-boot lines `Scanning
virtio 0:1...`, `Found U-Boot script /boot.scr`, `Found /extlinux/extlinux.conf`, `Retrieving
file: ...`, `append: ...`, `## Executing script at`, FIT `Using 'conf' configuration`, GRUB and
Raspberry Pi hints) and, when they could be read, the files themselves. The rules are about
classes of boards (what U-Boot, pxe and the firmwares print and read), not one board's text.
Which files to read is `boot_files` (from the log and the environment) or, when the log says
nothing, a probe of the distro-boot devices at the prompt (`probe_command`, `parse_probe`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from bootlab.core.analysis.bootlog import BootLog
from bootlab.core.board.cmdline import Cmdline, Edit, Target, locate_bootargs, split_cmdline
from bootlab.core.board.hush import expand, run_chain

SourceKind = Literal["bootargs", "chain", "script", "extlinux", "devicetree", "cmdline_txt",
                     "grub", "unknown"]

_SCANNING = re.compile(r"Scanning (\w+) (\d+:[0-9a-fA-F]+)\.\.\.")
_FOUND_SCRIPT = re.compile(r"Found U-Boot script (\S+)")
_FOUND_CONF = re.compile(r"Found (\S*(?:extlinux|syslinux|pxelinux)\S*\.conf)\b")
_RETRIEVING = re.compile(r"Retrieving file: (\S+)")
_APPEND = re.compile(r"^\s*append: (.*)$")
_MENU_PICK = re.compile(r"^\s*\d+:\s+(\S+)\s*$")
_EXECUTING = re.compile(r"## Executing script at ([0-9a-fA-F]+)")
_FIT_CONFIG = re.compile(r"Using '([^']+)' configuration")
_KERNEL_CMDLINE = re.compile(r"Kernel command line: (.*)$")
_UBOOT = re.compile(r"\bU-Boot (?:SPL )?\d{4}\.\d{2}")
_GRUB = re.compile(r"GNU GRUB|Welcome to GRUB|^\s*Booting `|\bgrub> ")
_RPI = re.compile(r"Raspberry Pi|\bbcm2708_fb\.|\bvc_mem\.mem_base=|\bsmsc95xx\.macaddr=")
_LOAD = re.compile(r"\b(?:load|fatload|ext[24]load)\s+(\w+)\s+(\S+)\s+(\S+)\s+(\S+)")
_SETENV_BOOTARGS = re.compile(r"^(?:setenv|env\s+set)\s+(?:-f\s+)?bootargs(?:\s+(.*))?$",
                              re.DOTALL)
_FDT_BOOTARGS = re.compile(r"^fdt\s+get\s+value\s+bootargs\s+/chosen\s+bootargs\b")
_UNSET_TEST = re.compile(r'^(?:test\s+-z\s+"?\$\{?bootargs\}?"?|!\s*env\s+exists\s+bootargs)$')
_SET_TEST = re.compile(r'^(?:test\s+-n\s+"?\$\{?bootargs\}?"?|env\s+exists\s+bootargs)$')
_STANDALONE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_BLOCK_DEVICES = ("mmc", "virtio")
"""Distro-boot devices a probe reads at the prompt: they need no start command (`usb start`,
`scsi scan`, `nvme scan` would change the boot being measured)."""
PROBE_TAG = "bootlab-found"


@dataclass(frozen=True)
class BootFile:
    """A file a board boots from: where it is, what it is, and its text once read."""

    device: str | None
    """U-Boot's name of the partition: `virtio 0:1`, `mmc 1:2` (None: not known)."""
    path: str
    kind: Literal["script", "extlinux", "cmdline_txt", "grub"]
    text: str | None = None

    @property
    def where(self) -> str:
        """`/boot.scr on virtio 0:1`."""
        return f"{self.path} on {self.device}" if self.device else self.path


@dataclass(frozen=True)
class LogHints:
    """What a boot log says about where the kernel's arguments came from."""

    uboot: bool = False
    device: str | None = None
    """The partition the script or configuration was found on (`Scanning IFACE DEV:PART...`)."""
    script: str | None = None
    """`Found U-Boot script PATH`."""
    executed_script: bool = False
    """`## Executing script at ...` (a script ran, found by distro boot or not)."""
    conf: str | None = None
    """The extlinux/pxe configuration file retrieved."""
    label: str | None = None
    """The pxe menu entry booted (`1:\\tlinux`)."""
    append: str | None = None
    """pxe's `append: ...` (what the label's append line expanded to)."""
    fit_config: str | None = None
    kernel_cmdline: str | None = None
    grub: bool = False
    rpi: bool = False


def log_hints(log: BootLog | str | Sequence[str] | None) -> LogHints:
    """Read the hints of a boot log (a `BootLog`, its text or its lines; the last boot's
    lines are best: an earlier boot's scan may have found other files)."""
    if log is None:
        return LogHints()
    if isinstance(log, BootLog):
        lines: Sequence[str] = [line.message for line in log.lines]
    elif isinstance(log, str):
        lines = log.splitlines()
    else:
        lines = log
    found: dict[str, object] = {}
    scanning: str | None = None
    for line in lines:
        line = line.rstrip("\r")
        if _UBOOT.search(line):
            found["uboot"] = True
        if (match := _SCANNING.search(line)) is not None:
            scanning = f"{match.group(1)} {match.group(2)}"
        if (match := _FOUND_SCRIPT.search(line)) is not None:
            found.update(script=match.group(1), device=scanning)
        conf = _FOUND_CONF.search(line) or (None if "conf" in found else _RETRIEVING.search(line))
        if conf is not None and conf.group(1).endswith(".conf"):
            found.update(conf=conf.group(1), device=scanning)
        if "conf" in found and (match := _MENU_PICK.match(line)) is not None:
            found["label"] = match.group(1)
        if (match := _APPEND.match(line)) is not None:
            found["append"] = match.group(1).strip()
        if _EXECUTING.search(line):
            found["executed_script"] = True
        if (match := _FIT_CONFIG.search(line)) is not None:
            found["fit_config"] = match.group(1)
        if (match := _KERNEL_CMDLINE.search(line)) is not None:
            found["kernel_cmdline"] = match.group(1).strip()
        if _GRUB.search(line):
            found["grub"] = True
        if _RPI.search(line):
            found["rpi"] = True
    return LogHints(**found)  # type: ignore[arg-type]


def boot_files(env: Mapping[str, str], hints: LogHints) -> list[BootFile]:
    """The files the last boot read its arguments from, as far as the log and the environment
    tell: distro boot's script or extlinux.conf (log), or a `load ... PATH` that `bootcmd`'s
    chain does before `source` or `sysboot` (environment)."""
    if hints.conf is not None:
        return [BootFile(hints.device, hints.conf, "extlinux")]
    if hints.script is not None:
        return [BootFile(hints.device, hints.script, "script")]
    values = dict(env)
    for path in run_chain(values):
        script = values[path[-1]]
        if not re.search(r"\b(?:source|sysboot)\b", script):
            continue
        for match in _LOAD.finditer(script):
            iface, part, _, name = (expand(group, values) for group in match.groups())
            if name.startswith("$") or not name:
                continue
            kind: Literal["script", "extlinux"] = "extlinux" if name.endswith(".conf") \
                else "script"
            return [BootFile(f"{iface} {part}", name, kind)]
    return []


def probe_devices(env: Mapping[str, str]) -> list[str]:
    """The distro-boot devices (`boot_targets`) a probe may read, in boot order: `virtio 0`."""
    devices = []
    for target in env.get("boot_targets", "").split():
        match = re.fullmatch(r"([a-z]+)(\d+)", target)
        if match is not None and match.group(1) in _BLOCK_DEVICES:
            devices.append(f"{match.group(1)} {match.group(2)}")
    return devices


def probe_command(env: Mapping[str, str], device: str) -> str:
    """One U-Boot command listing the boot files distro boot would find on `device`, as
    `bootlab-found IFACE DEV:PART PATH` lines, in the order distro boot looks (bootable
    partitions, else 1; each prefix: extlinux.conf, then the scripts). It sets nothing that
    stays: the partition list variable is deleted again."""
    prefixes = "${boot_prefixes}" if "boot_prefixes" in env else "/ /boot/"
    conf = "${boot_syslinux_conf}" if "boot_syslinux_conf" in env else "extlinux/extlinux.conf"
    scripts = "${boot_scripts}" if "boot_scripts" in env else "boot.scr.uimg boot.scr"
    return (f"part list {device} -bootable bl_parts;env exists bl_parts||setenv bl_parts 1;"
            f"for p in ${{bl_parts}};do for d in {prefixes};do for f in {conf} {scripts};do "
            f"if test -e {device}:$p $d$f;then echo {PROBE_TAG} {device}:$p $d$f;fi;"
            "done;done;done;setenv bl_parts")


def parse_probe(output: str, env: Mapping[str, str]) -> list[BootFile]:
    """The files a `probe_command` found, in the order distro boot would try them."""
    conf = env.get("boot_syslinux_conf", "extlinux/extlinux.conf")
    files = []
    for match in re.finditer(rf"(?m)^{PROBE_TAG} ([a-z]+ \d+:[0-9a-fA-F]+) ([^\s$]+)\s*$",
                             output):
        path = match.group(2)
        files.append(BootFile(match.group(1), path,
                              "extlinux" if path.endswith(conf) else "script"))
    return files


def _statements(text: str) -> list[str]:
    """A hush script's statements: split at `;` and newlines outside quotes, comments gone."""
    statements: list[str] = []
    current: list[str] = []
    quote: str | None = None
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "\\" and index + 1 < len(text):
            current.append(char + text[index + 1])
            index += 2
            continue
        elif char == "#" and (not current or "".join(current)[-1:].isspace()):
            while index < len(text) and text[index] != "\n":
                index += 1
            continue
        elif char in ";\n":
            statements.append("".join(current).strip())
            current = []
            index += 1
            continue
        current.append(char)
        index += 1
    statements.append("".join(current).strip())
    return [s for s in statements if s]


@dataclass(frozen=True)
class ScriptSetting:
    """The `setenv bootargs` that decides a script's effect on the command line."""

    template: str | None
    """What it sets bootargs to (quotes removed); None: copied from the device tree."""
    when: Literal["always", "unset", "other"]
    """Always; only when bootargs is unset (a default); under another condition."""


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text.replace('"', "")


def script_setting(text: str) -> ScriptSetting | None:
    """How a U-Boot script sets bootargs: its last `setenv bootargs` that always runs, else its
    default for an unset bootargs, else one under another condition; None if it sets none."""
    stack: list[str] = []
    found: list[ScriptSetting] = []
    for statement in _statements(text):
        for piece in re.split(r"(\|\||&&)", statement):
            piece = piece.strip()
            if not piece or piece in ("||", "&&"):
                continue
            head = re.match(r"^(if|elif|then|else|fi|do|done)\b\s*", piece)
            while head is not None:
                word = head.group(1)
                if word == "if":
                    stack.append(_condition(piece[head.end():]))
                    piece = ""
                elif word == "elif" and stack:
                    stack[-1] = "other"
                    piece = ""
                elif word == "else" and stack:
                    stack[-1] = {"unset": "set", "set": "unset"}.get(stack[-1], "other")
                elif word == "fi" and stack:
                    stack.pop()
                piece = piece[head.end():].strip()
                head = re.match(r"^(if|elif|then|else|fi|do|done)\b\s*", piece)
            if not piece:
                continue
            guard = _guard(statement, piece)
            when = guard if guard != "always" else (
                "always" if not stack else ("unset" if stack == ["unset"] else
                                            "set" if stack == ["set"] else "other"))
            if _FDT_BOOTARGS.match(piece):
                found.append(ScriptSetting(None, "always" if when == "always" else "other"))
                continue
            match = _SETENV_BOOTARGS.match(piece)
            if match is None or not (match.group(1) or "").strip():
                continue
            template = _unquote(match.group(1))
            if when == "set" and "bootargs" not in _refs(template):
                when = "other"
            found.append(ScriptSetting(template, "always" if when == "set" else when))
    for when in ("always", "unset", "other"):
        chosen = [s for s in found if s.when == when]
        if chosen:
            return chosen[-1]
    return None


def _condition(text: str) -> str:
    test = re.sub(r"\s*;?\s*then\b.*$", "", text).strip()
    if _UNSET_TEST.match(test):
        return "unset"
    if _SET_TEST.match(test):
        return "set"
    return "other"


def _guard(statement: str, piece: str) -> Literal["always", "unset", "set", "other"]:
    """The `A || B` / `A && B` guard on `piece` within its statement."""
    before = statement[:statement.find(piece)] if piece in statement else ""
    match = re.search(r"(.*?)\s*(\|\||&&)\s*$", before)
    if match is None:
        return "always"
    test = match.group(1).strip()
    if (match.group(2) == "||" and _SET_TEST.match(test)) or \
            (match.group(2) == "&&" and _UNSET_TEST.match(test)):
        return "unset"
    if (match.group(2) == "&&" and _SET_TEST.match(test)) or \
            (match.group(2) == "||" and _UNSET_TEST.match(test)):
        return "set"
    return "other"


def _refs(template: str) -> list[str]:
    """Variables that are whole words of a template (`${bootargs}`, `${optargs}`)."""
    refs = []
    for word in split_cmdline(template):
        match = _STANDALONE.fullmatch(word)
        if match is not None:
            refs.append(match.group(1) or match.group(2))
    return refs


def extlinux_append(text: str, label: str | None = None) -> tuple[str | None, str | None]:
    """The booted label of an extlinux.conf and its `append` text (None: no append line; a
    global `append` counts for labels without one). The label is `label`, else `default`,
    else the first."""
    labels: dict[str, str | None] = {}
    order: list[str] = []
    default: str | None = None
    common: str | None = None
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        key = key.lower()
        value = value.strip()
        if key == "label":
            current = value
            labels[current] = None
            order.append(current)
        elif key == "default":
            default = value
        elif key == "append":
            if current is None:
                common = value
            else:
                labels[current] = value
    pick = next((n for n in (label, default) if n in labels), order[0] if order else None)
    if pick is None:
        return None, common
    own = labels[pick]
    return pick, own if own is not None else common


@dataclass(frozen=True)
class ArgSource:
    """Where the kernel's arguments come from, and whether `setenv` can change them."""

    kind: SourceKind
    env_can_change: bool
    """Changing the U-Boot environment changes the command line (else a file must change)."""
    cmdline: str | None = None
    """The arguments as this source gives them now, when known."""
    file: BootFile | None = None
    variable: str | None = None
    """The U-Boot variable changes go to (bootargs, or the one a chain or script expands)."""
    detail: str = ""
    """What exactly: the `setenv bootargs ...` of a script, the `append` text, the FIT
    configuration."""
    target: Target | None = None
    """For a script that builds bootargs from variables: how to edit through them."""
    confirmed: bool = True
    """Read from the file itself or told by the log (False: inferred, the file not read)."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def where(self) -> str:
        """Where the arguments come from, in words."""
        file = self.file.where if self.file else ""
        if self.kind == "extlinux":
            return f"the `append` line of {file}"
        if self.kind == "script":
            if self.env_can_change and self.variable:
                return (f"the U-Boot variable {self.variable}, which {file} builds into "
                        f"bootargs (`setenv bootargs {self.detail}`)")
            if self.env_can_change:
                return f"the default `setenv bootargs` in {file}, used while bootargs is unset"
            return f"the `setenv bootargs` in {file}, which overwrites the environment's"
        if self.kind == "devicetree":
            fit = f" of FIT configuration '{self.detail}'" if self.detail else ""
            via = f" (copied into bootargs by {file})" if file else ""
            return f"the device tree's /chosen/bootargs{fit}{via}"
        if self.kind == "cmdline_txt":
            return f"{file or '/cmdline.txt'}, which the Raspberry Pi firmware reads"
        if self.kind == "grub":
            return f"the `linux` line of {file or '/boot/grub/grub.cfg'}, which GRUB reads"
        if self.kind == "chain":
            return f"the U-Boot variable {self.variable} ({self.detail})"
        if self.kind == "unknown":
            return f"somewhere bootlab did not find ({self.detail})"
        return "the U-Boot variable bootargs, passed to the kernel as it is"

    def describe(self) -> str:
        """One sentence for messages: where the arguments come from and what can change them."""
        how = "the U-Boot environment can change them" if self.env_can_change else \
            "the U-Boot environment cannot change them"
        notes = "".join(f"; {note}" for note in self.notes)
        return f"this board's kernel arguments come from {self.where}: {how}{notes}"

    @property
    def file_editable(self) -> bool:
        """bootlab can rewrite this source's file (at the U-Boot prompt, or from Linux with
        `--from-linux`): extlinux.conf, cmdline.txt, grub.cfg or a boot script (its image
        rebuilt) on a known partition, read, its command line found in it."""
        return self.kind in ("extlinux", "cmdline_txt", "grub", "script") \
            and not self.env_can_change \
            and self.file is not None and self.file.device is not None \
            and self.file.text is not None and self.edited(()) is not None

    def refusal(self, what: str) -> str:
        """Why `what` (a setting) cannot be applied through the environment, and whether
        `--from-linux` can edit the file instead."""
        how = "use --from-linux to edit it" if self.file_editable else \
            "bootlab cannot edit it from Linux"
        return (f"{what} cannot be applied: this board's kernel arguments come from "
                f"{self.where}, which the U-Boot environment cannot change; {how}")

    def edited(self, edits: Sequence[Edit]) -> tuple[str, str] | None:
        """The file's text with the command line edited, and the new command line; None when
        this source is no file whose arguments bootlab can rewrite."""
        if self.file is None or self.file.text is None or self.env_can_change:
            return None
        text = self.file.text
        if self.kind == "extlinux":
            pattern = re.compile(r"(?mi)^(\s*append[ \t]+)(.*?)[ \t]*$")
        elif self.kind == "cmdline_txt":
            pattern = re.compile(r"\A()(.*?)\s*$", re.DOTALL)
        elif self.kind == "script":
            pattern = re.compile(r"(?m)((?:setenv|env\s+set)\s+bootargs\s+)"
                                 r"(\"[^\"\n]*\"|'[^'\n]*'|[^;\n]*?)(?=[ \t]*(?:;|$))")
        elif self.kind == "grub":
            pattern = re.compile(r"(?m)^(\s*linux(?:efi|16)?\s+\S+[ \t]+)(.*?)[ \t]*$")
        else:
            return None
        matches = [m for m in pattern.finditer(text) if _unquote(m.group(2)) == self.detail]
        if not matches:
            return None
        match = matches[-1]
        old = match.group(2)
        quote = old[0] if len(old) >= 2 and old[0] == old[-1] and old[0] in "'\"" else ""
        line = Cmdline.parse(self.detail)
        for edit in edits:
            if edit.op == "set":
                line = line.set(edit.name, edit.value)
            elif edit.op == "remove":
                line = line.remove(edit.name)
            else:
                line = line.with_console_baud(edit.baud)
        new = f"{quote}{line}{quote}"
        return text[:match.start(2)] + new + text[match.end(2):], str(line)


def locate(env: Mapping[str, str], log: BootLog | str | Sequence[str] | None = None,
           files: Sequence[BootFile] = ()) -> ArgSource:
    """Where the kernel's arguments come from (see the module docstring).

    Args:
        env: the U-Boot environment (`printenv`).
        log: the last boot's log, when there is one.
        files: the file the board boots from first (as `boot_files` or a probe found it),
            with its text when it could be read.
    """
    values = dict(env)
    hints = log_hints(log)
    booted = files[0] if files else None
    if hints.grub:
        grub = booted if booted is not None and booted.kind == "grub" else None
        return ArgSource("grub", False, hints.kernel_cmdline, grub, confirmed=True)
    if hints.rpi and not hints.uboot:
        txt = booted if booted is not None and booted.kind == "cmdline_txt" else None
        return ArgSource("cmdline_txt", False, hints.kernel_cmdline, txt, confirmed=True)
    from_env = _from_env(values, hints)
    if booted is not None and booted.kind == "extlinux":
        found = _extlinux(booted, values, hints, from_env)
        if found is not None:
            return found
    if booted is not None and booted.kind == "script":
        return _script(booted, values, hints, from_env)
    if hints.executed_script and hints.kernel_cmdline and from_env.cmdline \
            and split_cmdline(hints.kernel_cmdline) != split_cmdline(from_env.cmdline):
        return replace(from_env, notes=(
            "a U-Boot script ran in the last boot and the kernel got another command line "
            f"({hints.kernel_cmdline}) than the environment gives",))
    return from_env


def _from_env(env: dict[str, str], hints: LogHints) -> ArgSource:
    """The environment's own answer: bootargs, a chain that rebuilds it, or the device tree."""
    target = locate_bootargs(env)
    if target.source is not None:
        return ArgSource("chain", True, target.cmdline(env, hints.kernel_cmdline),
                         variable=target.var, detail=target.describe())
    if "bootargs" in env:
        return ArgSource("bootargs", True, env["bootargs"], variable="bootargs")
    return ArgSource("devicetree", True, hints.kernel_cmdline, variable="bootargs",
                     detail=hints.fit_config or "",
                     notes=("bootargs is unset; setting it replaces /chosen/bootargs",))


def _extlinux(booted: BootFile, env: dict[str, str], hints: LogHints,
              from_env: ArgSource) -> ArgSource | None:
    if booted.text is None:
        if hints.append is None:
            return None
        same = from_env.cmdline is not None and \
            split_cmdline(hints.append) == split_cmdline(from_env.cmdline)
        return ArgSource("extlinux", same, hints.append, booted, detail=hints.append,
                         confirmed=not same)
    label, append = extlinux_append(booted.text, hints.label)
    if append is None:
        return replace(from_env, notes=(f"{booted.where} has no `append` line for label "
                                        f"{label}: bootargs is passed as it is",))
    target = _template_target(append)
    if target is not None:
        return ArgSource("extlinux", True, target.cmdline(env, hints.kernel_cmdline), booted,
                         variable=target.add_to, detail=append, target=target)
    return ArgSource("extlinux", False, append, booted, detail=append)


def _template_target(template: str) -> Target | None:
    """How to edit a command line a file builds from variables (`${bootargs} quiet`,
    `console=${console} ${optargs}`): through the last whole-word variable, preferring one
    that is not bootargs; None when no variable is a whole word."""
    refs = _refs(template)
    if not refs:
        return None
    add_to = next((r for r in reversed(refs) if r != "bootargs"), refs[-1])
    return Target(template=template, source=None, chain=(), add_to=add_to, quote=None)


def _script(booted: BootFile, env: dict[str, str], hints: LogHints,
            from_env: ArgSource) -> ArgSource:
    if booted.text is None:
        return replace(from_env, confirmed=False,
                       notes=(f"{booted.where} runs at boot and was not read",))
    setting = script_setting(booted.text)
    if setting is None:
        return replace(from_env, notes=(f"{booted.where} does not set bootargs",))
    if setting.template is None:
        kind: SourceKind = "cmdline_txt" if hints.rpi else "devicetree"
        return ArgSource(kind, False, hints.kernel_cmdline, booted,
                         detail=hints.fit_config or "")
    if setting.when == "unset":
        if "bootargs" in env or from_env.kind == "chain":
            return replace(from_env, notes=(f"{booted.where} sets bootargs only when it is "
                                            "unset",))
        default = " ".join(split_cmdline(expand(setting.template, env)))
        return ArgSource("script", True, default, booted, detail=setting.template)
    target = _template_target(setting.template)
    if target is not None:
        return ArgSource("script", True, target.cmdline(env, hints.kernel_cmdline), booted,
                         variable=target.add_to, detail=setting.template, target=target)
    other = setting.when == "other"
    return ArgSource("script", False, " ".join(split_cmdline(expand(setting.template, env))),
                     booted, detail=setting.template, confirmed=not other,
                     notes=("it sets bootargs under a condition bootlab cannot judge",)
                     if other else ())
