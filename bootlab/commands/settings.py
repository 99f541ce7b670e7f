"""`bootlab settings`: the one-key settings with their keys; with `--from`, each one's state in
a recorded boot and the line (or record) that shows it, as the app's settings pane shows them.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bootlab.commands.common import fail, print_notices
from bootlab.core.analysis.bootlog import read_boot
from bootlab.core.analysis.loading import resolve_profile
from bootlab.core.analysis.profiles import ProfileError
from bootlab.core.board.applicability import applicable
from bootlab.core.board.evidence import Evidence, settings_evidence, state_word
from bootlab.core.board.facts import facts_from_log
from bootlab.core.board.settings import Setting, SettingsError, load_settings, settings_dirs
from bootlab.core.capture.sources import SourceError, open_source
from bootlab.core.capture.text import clean
from bootlab.exitcodes import BAD_INPUT, OK

NOTHING = "nothing in the log shows it"


def run_settings(args: argparse.Namespace) -> int:
    """List the settings; with --from, their states and evidence in that boot."""
    try:
        settings = load_settings(settings_dirs(args.sessions))
    except SettingsError as error:
        return fail(str(error), BAD_INPUT)
    if args.log is None:
        for setting in settings:
            where = setting.var or setting.name or ""
            print(f"{setting.key}  {setting.id:18} {setting.kind:14} {where:14} {setting.title}")
        return OK
    try:
        source = open_source(args.log, args.kind)
        profile = resolve_profile(args.profile, args.sessions)
    except (SourceError, ProfileError) as error:
        return fail(str(error), BAD_INPUT)
    print_notices(args.log, source.notices)
    log = read_boot(source.data, profile, console=source.kind != "dmesg")
    facts = facts_from_log(log)
    evidence = settings_evidence(settings, log, source.meta)
    rows = [_row(setting, evidence.get(setting.id), *applicable(setting, facts))
            for setting in settings]
    if args.json:
        json.dump({"source": {"path": str(source.path), "kind": source.kind},
                   "settings": rows}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return OK
    print(f"key  {'setting':16} {'state':8} {'value':10} {'source':9} why")
    for row in rows:
        print(clean(_text_row(row)).rstrip())
    return OK


def _text_row(row: dict[str, Any]) -> str:
    """A row of the table: state, value, source and why (n/a: why it does not apply)."""
    start = f"{row['key']}    {row['id']:16} {row['state']:8} "
    if row["state"] == "n/a":
        return f"{start}{'':10} {'':9} {row['applies']}"
    if row["how"] is None:
        return f"{start}{'':10} {'':9} {NOTHING}"
    why = " · ".join(part for part in (
        f"kernel default ({row['kernel_default']})" if row["kernel_default"] else "",
        row["note"], f"line {row['line']}: {row['text'].strip()}" if row["line"] else "",
        *(f"but {other['note']}" for other in row["against"])) if part)
    return f"{start}{row['value'] or '':10} {row['source']:9} {why}"


def _evidence_json(evidence: Evidence) -> dict[str, Any]:
    return {"state": "on" if evidence.state else "off", "value": evidence.value,
            "how": evidence.how, "source": evidence.source, "note": evidence.note,
            "line": evidence.line, "text": evidence.text,
            "kernel_default": evidence.kernel_default}


def _row(setting: Setting, evidence: Evidence | None, ok: bool, why: str) -> dict[str, Any]:
    """A setting's line of the table (and its JSON): the state as the pane shows it, then
    the evidence."""
    row: dict[str, Any] = {"id": setting.id, "key": setting.key, "title": setting.title,
                           "applicable": ok, "applies": why}
    if evidence is None:
        row.update(value=None, how=None, source=None, note=None, line=None, text=None,
                   kernel_default=None, against=[])
    else:
        row.update(_evidence_json(evidence),
                   against=[_evidence_json(other) for other in evidence.against])
    row["state"] = state_word(evidence, ok)
    return row
