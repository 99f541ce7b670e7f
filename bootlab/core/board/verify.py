"""Whether an A/B boot ran with its variant's settings: the boot's evidence against the plan.

An A/B verdict is only worth something if every measured boot ran as its variant says. Each
variant makes claims (`run_claims`): the settings it sets are in force, and the settings
another variant sets are not (the board as it is runs without them), unless the variant's
own environment already gives them. `check_boot` holds each claim against what one boot
shows (`evidence.settings_evidence`, the log and its inferences only: the session header
records the plan, which proves nothing), and against `/proc/cmdline` read after login when
the log cannot tell a kernel parameter. A check is "in force", "not in force" or "not shown";
it contradicts its claim when it shows the other state. `arguments_source` says where the
board's kernel arguments come from, for the message that stops a run; `summary_lines` counts
the checks of a variant's boots for the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from bootlab.core.analysis.bootlog import BootLog
from bootlab.core.board.argsource import ArgSource, boot_files, locate, log_hints
from bootlab.core.board.evidence import Evidence, cmdline_state, same_value, settings_evidence
from bootlab.core.board.settings import Setting, State

Shown = Literal["in force", "not in force", "not shown"]
PROC_CMDLINE = "cat /proc/cmdline"
"""The command that reads the running kernel's command line after login."""
_QUOTED = 120
"""Characters of an evidence line quoted in a summary."""
_CMDLINE_KINDS = ("cmdline_flag", "cmdline_value", "cmdline_remove")


@dataclass(frozen=True)
class Claim:
    """What a variant's boots must show of one setting."""

    label: str
    """The setting as the run names it: `quiet`, `bootdelay=0`, `cmdline+=foo=1`."""
    setting: Setting
    wanted: bool
    """True: in force with one of `values`; False: in force with none of them."""
    values: tuple[str | None, ...]
    """The values meant (None: the setting's own value, or any value)."""


@dataclass(frozen=True)
class Check:
    """One claim held against one boot."""

    label: str
    wanted: bool
    shown: Shown
    note: str
    """Why, in words (the evidence's note)."""
    line: int | None = None
    """The line that shows it (1-based in the boot's log), when one does."""
    text: str | None = None

    @property
    def contradicted(self) -> bool:
        """The boot shows the opposite of the claim."""
        return self.shown != "not shown" and (self.shown == "in force") != self.wanted

    def to_json(self) -> dict[str, Any]:
        """The check as a session's meta record holds it."""
        return asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Check | None:
        """A check read back from a session (None: not a check)."""
        try:
            shown = data["shown"]
            if shown not in ("in force", "not in force", "not shown"):
                return None
            line = data.get("line")
            text = data.get("text")
            return Check(str(data["label"]), bool(data["wanted"]), shown, str(data["note"]),
                         line if isinstance(line, int) else None,
                         text if isinstance(text, str) else None)
        except (KeyError, TypeError):
            return None


def recorded_checks(meta: Mapping[str, Any]) -> list[Check]:
    """The checks a boot's session records (its `verified` meta record), if any."""
    records = meta.get("verified")
    if not isinstance(records, list):
        return []
    checks = [Check.from_json(r) for r in records if isinstance(r, dict)]
    return [check for check in checks if check is not None]


Applied = Sequence[tuple[str, Setting, State]]
"""A variant's settings as its plan applies them: (label, setting, choice)."""


def run_claims(applied: Mapping[str, Applied],
               envs: Mapping[str, Mapping[str, str]]) -> dict[str, tuple[Claim, ...]]:
    """Each variant's claims: its own settings in force, the others' not in force.

    Args:
        applied: variant -> the settings its plan applies (skipped ones left out).
        envs: variant -> the U-Boot environment its plan leads to; a setting another variant
            sets is expected in force here only when this environment already gives it.
    """
    claimers: dict[str, list[tuple[str, Setting, str | None]]] = {}
    for items in applied.values():
        for label, setting, choice in items:
            claimers.setdefault(_subject(setting), []).append(
                (label, setting, _value(setting, choice)))
    claims: dict[str, tuple[Claim, ...]] = {}
    for variant, items in applied.items():
        own = [Claim(label, setting, choice is not False, (_value(setting, choice),))
               for label, setting, choice in items]
        mine = {_subject(setting) for _, setting, _ in items}
        for subject, others in claimers.items():
            if subject in mine:
                continue
            setting = others[0][1]
            same = [(lbl, v) for lbl, s, v in others if s.kind == setting.kind]
            labels = list(dict.fromkeys(lbl for lbl, _ in same))
            values = tuple(dict.fromkeys(v for _, v in same))
            env = envs.get(variant, {})
            already = any(_env_state(setting, value, env) for value in values)
            own.append(Claim(" or ".join(labels), setting, already, values))
        claims[variant] = tuple(own)
    return claims


def _subject(setting: Setting) -> str:
    """What a setting acts on, so a variant's `quiet` and another's `cmdline-=quiet` meet."""
    if setting.kind in ("uboot_var", "baudrate") and setting.var:
        return f"var:{setting.var}"
    if setting.name and setting.kind in _CMDLINE_KINDS:
        return "param:" + setting.name.replace("-", "_")
    return f"id:{setting.id}"


def _value(setting: Setting, choice: State) -> str | None:
    return choice if isinstance(choice, str) else setting.value


def _for_value(setting: Setting, value: str | None) -> Setting:
    """The setting as meant with `value`: the command line and the rules that read a value
    (a countdown's start) then compare with it; the rules with a fixed state speak of the
    setting's own value only, so they go when another value is meant."""
    if value is None or (setting.value is not None and same_value(value, setting.value)):
        return setting
    return replace(setting, value=value,
                   evidence=tuple(rule for rule in setting.evidence if rule.state is None))


def _env_state(setting: Setting, value: str | None, env: Mapping[str, str]) -> bool:
    """The environment gives the setting with this value."""
    meant = _for_value(setting, value)
    given = settings_evidence([meant], None, None, dict(env)).get(meant.id)
    return given is not None and given.state


def check_boot(claims: Sequence[Claim], log: BootLog | None, proc_cmdline: str | None = None,
               baud: int | None = None) -> list[Check]:
    """Each claim against one boot.

    Args:
        claims: the variant's claims (`run_claims`).
        log: the boot (`bootlog.read_boot` of its session).
        proc_cmdline: `/proc/cmdline` read after login, for kernel parameters the log does
            not show.
        baud: the rate bootlab read the boot at, when it switched the port for the variant.
    """
    checks = []
    for claim in claims:  # one at a time: spec items of two variants share ids
        setting = claim.setting
        check = _check(claim, [_logged(setting, value, log, baud) for value in claim.values])
        if check.shown == "not shown" and proc_cmdline is not None \
                and setting.kind in _CMDLINE_KINDS:
            found = []
            for value in claim.values:
                decided = cmdline_state(_for_value(setting, value), proc_cmdline,
                                        "/proc/cmdline (read after login)")
                found.append(None if decided is None else
                             Evidence(decided[0], decided[1], "log", decided[2]))
            check = _check(claim, found)
        checks.append(check)
    return checks


def _logged(setting: Setting, value: str | None, log: BootLog | None,
            baud: int | None) -> Evidence | None:
    """What the boot's log shows of the setting with this value."""
    if log is None:
        return None
    if setting.kind == "baudrate":
        seen = next((m for m in log.milestones if m.stage in ("kernel", "userspace")), None)
        if baud is None or seen is None:
            return None
        line = log.line(seen.line)
        return Evidence(value is None or same_value(value, str(baud)), str(baud), "log",
                        f"the console was readable at {baud} baud", seen.line,
                        line.text if line is not None else None)
    meant = _for_value(setting, value)
    return settings_evidence([meant], log).get(meant.id)


def _check(claim: Claim, found: Sequence[Evidence | None]) -> Check:
    """The claim against the evidence for each of its values."""
    # Missing lines that seem to show a setting the variant runs without prove nothing:
    # another setting may hide them too (quiet and loglevel=3 both hide the info lines).
    ambiguous = [e for e in found if e is not None and e.how == "inferred" and e.state
                 and not claim.wanted]
    states = [None if e is None or e in ambiguous else e.state for e in found]
    if True in states:
        shown: Shown = "in force"
        decider = found[states.index(True)]
    elif states and all(state is False for state in states):
        shown, decider = "not in force", found[0]
    elif ambiguous:
        first = ambiguous[0]
        return Check(claim.label, claim.wanted, "not shown",
                     f"{first.note}, which another setting may cause too", first.line,
                     first.text)
    else:
        return Check(claim.label, claim.wanted, "not shown", "the boot shows nothing of it")
    assert decider is not None
    return Check(claim.label, claim.wanted, shown, decider.note, decider.line, decider.text)


def wants_proc_cmdline(claims: Sequence[Claim], checks: Sequence[Check]) -> bool:
    """A kernel parameter the log does not show: `/proc/cmdline` after login can tell."""
    return any(check.shown == "not shown" and claim.setting.kind in _CMDLINE_KINDS
               for claim, check in zip(claims, checks, strict=True))


def arguments_source(env: Mapping[str, str], log: BootLog | None,
                     known: ArgSource | None = None) -> str:
    """Where this board's kernel arguments come from, in words: `known` when it was found
    before the run from the boot file itself, else `argsource.locate` from the environment and
    the boot's log (bootargs, a `bootcmd` chain, a boot script, extlinux.conf, the device tree,
    a firmware's file)."""
    if known is not None and known.file is not None:
        return known.describe()
    return locate(env, log, boot_files(env, log_hints(log))).describe()


def contradiction_text(variant: str, run: int, checks: Sequence[Check], source: str) -> str:
    """Why a run stops: each contradicted claim with the line that shows it, and where the
    board's kernel arguments come from."""
    parts = []
    for check in checks:
        if not check.contradicted:
            continue
        expected = "in force" if check.wanted else "not in force"
        shows = f"{check.shown}: {check.note}"
        if check.line is not None:
            shows += f" (line {check.line}: {(check.text or '').strip()!r})"
        parts.append(f"expected {check.label} {expected}, the boot shows it {shows}")
    return (f"{variant} run {run}: " + "; ".join(parts)
            + f"; {source}")


def summary_lines(boots: Sequence[Sequence[Check]]) -> list[str]:
    """A variant's checks over its boots, one line per setting and outcome with the line
    that shows it in the first of them (the same line of another boot differs only in its
    times): `quiet in force (...), 5 of 5 boots: 'Starting kernel ...'`."""
    counts: Counter[tuple[str, Shown, str]] = Counter()
    texts: dict[tuple[str, Shown, str], str | None] = {}
    for checks in boots:
        for check in checks:
            key = (check.label, check.shown, check.note)
            counts[key] += 1
            texts.setdefault(key, check.text.strip()[:_QUOTED] if check.text else None)
    return [f"{label} {shown} ({note}), {n} of {len(boots)} boots"
            + (f": {texts[(label, shown, note)]!r}" if texts[(label, shown, note)] else "")
            for (label, shown, note), n in counts.items()]
