"""The reading commands: analyze, compare, sessions, export, replay, profiles, the default."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.paths import ROOT, example_sessions

from bootlab.cli import main
from bootlab.core.capture.session import load_session
from bootlab.core.capture.text import clean
from bootlab.core.files.config import DEFAULT_SESSIONS, examples_dir, sessions_dir

DEFAULT = example_sessions("default")
QUIET = example_sessions("quiet")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_json_of_a_session(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", str(DEFAULT[0]), "--json")
    assert code == 0
    data = json.loads(out)
    ids = [m["id"] for m in data["milestones"]]
    assert ids[0] == "bootloader" and ids[-1] == "login"
    login = data["milestones"][-1]
    assert set(login) >= {"id", "title", "line", "text", "host_s", "kernel_s"}
    raw_lines = load_session(DEFAULT[0]).data.split(b"\n")
    for milestone in data["milestones"]:
        assert milestone["text"] == clean(raw_lines[milestone["line"] - 1])
    linux = next(m for m in data["milestones"] if m["id"] == "linux")
    assert linux["kernel_s"] == 0.0 and linux["host_s"] > 0
    assert data["phases"][0]["from"] == "bootloader" and data["clock"] == "host"
    assert data["source"]["label"] == "default"


def test_analyze_plain_log_uses_kernel_time(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "capture.log"
    log.write_bytes(load_session(DEFAULT[0]).data)
    code, out, _ = run(capsys, "analyze", str(log), "--json")
    data = json.loads(out)
    assert code == 0 and data["source"]["kind"] == "plain" and data["clock"] == "kernel"
    calibrate = next(m for m in data["milestones"] if m["id"] == "calibrate")
    assert calibrate["host_s"] is None and calibrate["kernel_s"] > 0


def test_analyze_reference_milestone(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "analyze", str(DEFAULT[0]), "--json", "--reference",
                    "starting_kernel")
    elapsed = {m["id"]: m["elapsed_s"] for m in json.loads(out)["milestones"]}
    assert elapsed["starting_kernel"] == 0 and elapsed["bootloader"] < 0 < elapsed["login"]


def test_analyze_text_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "analyze", str(QUIET[0]))
    assert code == 0
    assert "kernel_done (fallback)" in out and "starting_kernel" in out


@pytest.mark.parametrize("argv", [
    ["analyze", "/nonexistent/file.log"],
    ["analyze", "sessions", "--reference", "nope"],
    ["analyze", "README.md", "--profile", "does-not-exist"],
])
def test_analyze_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    if "--reference" in argv:
        argv[1] = str(DEFAULT[0])
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.startswith("bootlab: ")


def test_compare_groups_labels(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compare", *map(str, DEFAULT + QUIET), "--json")
    assert code == 0
    data = json.loads(out)
    assert [c["name"] for c in data["columns"]] == ["default", "quiet"]
    login = next(m for m in data["milestones"] if m["id"] == "login")
    default, quiet = login["columns"]
    assert default["n"] == 2 and default["min_s"] <= default["median_s"] <= default["max_s"]
    assert quiet["delta_s"] == pytest.approx(quiet["median_s"] - default["median_s"])
    linux = next(m for m in data["milestones"] if m["id"] == "linux")
    assert linux["columns"][1] is None           # quiet hides the kernel's own lines


def test_compare_ungrouped_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compare", str(DEFAULT[0]), str(QUIET[0]), "--no-group")
    assert (code == 0 and DEFAULT[0].name in out and "(+" in out) or "(-" in out


def test_sessions_listing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in DEFAULT + QUIET:
        shutil.copy(path, tmp_path)
    (tmp_path / "broken.jsonl").write_bytes(DEFAULT[0].read_bytes()[:300])
    code, out, _ = run(capsys, "sessions", "--sessions", str(tmp_path), "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 5
    good = [r for r in rows if r.get("label") == "quiet"]
    assert good[0]["total_s"] == good[0]["milestones"]["login"] > 3
    broken = next(r for r in rows if r["path"].endswith("broken.jsonl"))
    assert broken.get("notices") or broken.get("error")
    code, before, _ = run(capsys, "--sessions", str(tmp_path), "sessions", "--json")
    assert code == 0 and json.loads(before) == rows  # given before the command, it is the same


@pytest.mark.parametrize("fmt", ["csv", "markdown", "jsonl", "asciicast"])
def test_export_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    target = tmp_path / f"out.{fmt}"
    code, _, _ = run(capsys, "export", str(DEFAULT[0]), "--format", fmt, "-o", str(target))
    text = target.read_text()
    assert code == 0 and "\x1b]" not in text
    if fmt == "csv":
        assert text.startswith("boot,milestone,line") and "login" in text
    elif fmt == "markdown":
        assert text.startswith("| boot | milestone |") and "starting_kernel" in text
    elif fmt == "jsonl":
        lines = [json.loads(line) for line in text.splitlines()]
        assert len(lines) == len(load_session(DEFAULT[0]).data.split(b"\n"))
    else:
        header = json.loads(text.splitlines()[0])
        assert header["version"] == 2


def test_replay_instant(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "replay", str(DEFAULT[0]), "--speed", "0", "--timestamps")
    assert code == 0 and "U-Boot 2023.01" in out and "board login:" in out
    assert "\x1b" not in out


def test_profiles_reports_bad_user_profile(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "mine.toml").write_text(
        '[profile]\nname = "mine"\nextends = "linux"\n\n[[milestone]]\nid = "app"\n'
        'stage = "userspace"\nmatch = "app ready ("\n')
    code, _, err = run(capsys, "profiles", "--sessions", str(tmp_path))
    assert code == 2 and "mine.toml:6" in err and "bad pattern" in err


def test_profiles_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "profiles", "--show", "linux")
    assert code == 0 and "starting_kernel" in out and "fallback after starting_kernel" in out


def test_default_shows_the_bundled_examples(capsys: pytest.CaptureFixture[str]) -> None:
    # stdout is captured, not a terminal: the comparison is printed (a terminal gets the app,
    # tests/ui/test_cli_dispatch.py).
    code, out, err = run(capsys)
    assert code == 0 and "default" in out and "quiet" in out and "bootdelay0" in out
    assert "example" in err


def test_the_examples_are_not_where_a_checkout_records(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Run in a checkout, bootlab records to ./sessions: the examples once lived there, and a
    piped `bootlab` listed the user's own boots as "the bundled example boots"."""
    folder = examples_dir()
    assert folder is not None
    assert folder.resolve() != (ROOT / DEFAULT_SESSIONS).resolve()
    monkeypatch.chdir(tmp_path)   # a user's own recording in the folder bootlab records to
    mine = sessions_dir() / "20261204-120000-mine-01.jsonl"
    mine.parent.mkdir()
    shutil.copy(example_sessions("quiet")[0], mine)
    code, out, err = run(capsys)
    assert code == 0 and "mine" not in out and f"bundled example boots of the QEMU board in " \
        f"{folder}" in err


def test_every_command_the_parser_takes_has_its_handler() -> None:
    """One definition of the command line (`commands/parsers.py`) and one dispatch table
    (`cli.COMMANDS`): a command added to one and not the other is caught here."""
    from importlib import import_module

    from bootlab.cli import COMMANDS, _commands
    from bootlab.commands.parsers import build_parser

    assert _commands(build_parser()) | {None} == set(COMMANDS)
    for module, name in COMMANDS.values():
        assert callable(getattr(import_module(f"bootlab.commands.{module}"), name))
