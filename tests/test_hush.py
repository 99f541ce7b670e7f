"""U-Boot quoting and printenv parsing: models of both parsers, and the real U-Boot 2023.01."""

from __future__ import annotations

import shlex
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.qemu_env import PRINTENV

from bootlab.core.board.hush import (
    check_name,
    expand,
    parse_printenv,
    quote,
    run_chain,
    script_references,
    setenv_command,
)

# Values that need care; every one was typed into the QEMU board's U-Boot with `quote` and
# read back unchanged (test_real_uboot_reads_back_every_value repeats that).
TRICKY = ["a b", "it's", 'say "hi"', "${bootargs} quiet", "a;b", "back\\slash", "two\\\\bs",
          "end\\", "\\", "'", "''", "$", "a  b  ", " lead", "#hash", "x'\\'y",
          "{}()|&<>*?[]~!", "", "$(x)", "\\$x", "a\\'b",
          "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait quiet"]

typeable = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF,
                                 blacklist_characters="\x7f"))


def old_hush_word(text: str) -> str:
    """One word as U-Boot's old hush reads it (single quotes, backslashes outside them); a
    model of common/cli_hush.c: parse_stream collects the word, done_word then drops every
    backslash (even one that came from inside single quotes) and keeps the next character."""
    collected = ""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "'":
            end = text.index("'", index + 1)
            collected += text[index + 1:end]
            index = end + 1
        elif char == "\\":
            collected += text[index:index + 2]
            index += 2
        else:
            assert char not in ' \t;"$', f"unquoted special character in {text!r}"
            collected += char
            index += 1
    word = ""
    index = 0
    while index < len(collected):
        if collected[index] == "\\":
            index += 1
        word += collected[index]
        index += 1
    return word


def simple_setenv_value(line: str) -> str:
    """The value `setenv NAME ...` stores under U-Boot's simple parser (no hush), as modelled
    on common/cli_simple.c: split at unquoted, unescaped `;`, expand macros while removing
    one level of backslashes (remembering only the previous character), split at blanks,
    and setenv joins its arguments with one space."""
    commands, start, quoted = [], 0, False
    for index, char in enumerate(line):
        if char == "'" and (index == 0 or line[index - 1] != "\\"):
            quoted = not quoted
        if not quoted and char == ";" and index != start and line[index - 1] != "\\":
            commands.append(line[start:index])
            start = index + 1
    commands.append(line[start:])
    assert len(commands) == 1, f"{line!r} runs {len(commands)} commands"
    out: list[str] = []
    prev, state, index = "", 0, 0
    while index < len(line):
        char = line[index]
        index += 1
        if state != 3 and char == "\\" and prev != "\\":
            if index >= len(line):
                break
            prev, char = char, line[index]
            index += 1
        if state == 0:
            if char == "'" and prev != "\\":
                state = 3
            elif char == "$" and prev != "\\":
                state = 1
            else:
                out.append(char)
        elif state == 1:
            state = 2 if char in "({" else 0
            if state == 0:
                out += ["$", char]
        elif state == 2:
            state = 0 if char in ")}" else 2  # variables are unset in this model
        elif char == "'" and prev != "\\":
            state = 0
        else:
            out.append(char)
        prev = char
    argv = "".join(out).replace("\t", " ").split(" ")
    return " ".join(word for word in argv if word)[len("setenv x "):]


@pytest.mark.parametrize(("value", "typed"), [
    ("0", "0"),
    ("ttyAMA0,115200", "ttyAMA0,115200"),
    ("-2", "-2"),
    ("a b", "'a b'"),
    ("it's", "'it'\\''s'"),
    ("back\\slash", "'back'\\\\'slash'"),
    ("${bootargs} quiet", "'${bootargs} quiet'"),
    ("a;b", "'a;b'"),
    ("", "''"),
    ("'", "\\'"),
    ("#hash", "'#hash'"),
])
def test_hush_quoting(value: str, typed: str) -> None:
    assert quote(value) == typed


@pytest.mark.parametrize("value", TRICKY)
def test_hush_words_read_back_by_old_and_new_hush(value: str) -> None:
    typed = quote(value)
    assert old_hush_word(typed) == value
    assert shlex.split(f"setenv x {typed}") == ["setenv", "x", value]  # POSIX: the 2021 hush


@given(typeable)
def test_any_typeable_value_round_trips_through_hush(value: str) -> None:
    typed = quote(value)
    assert old_hush_word(typed) == value
    assert shlex.split(f"x {typed}")[1:] == [value]


@pytest.mark.parametrize(("value", "typed"), [
    ("0", "0"),
    ("a b", "a b"),
    ("${bootargs} quiet", "\\${bootargs} quiet"),
    ("it's", "it\\'s"),
    ("a;b", "a\\;b"),
    ("back\\slash", "back\\\\slash"),
    ("\\\\", "\\\\\\"),       # the second backslash follows a literal one: typed as it is
    ("\\;", "\\\\;"),
    ("\\$x", "\\\\$x"),
])
def test_simple_parser_quoting(value: str, typed: str) -> None:
    assert quote(value, hush=False) == typed
    assert simple_setenv_value(f"setenv x {typed}") == value


@given(typeable.filter(lambda v: v.strip(" ") == v and "  " not in v and v != ""))
def test_any_single_spaced_value_round_trips_through_the_simple_parser(value: str) -> None:
    assert simple_setenv_value(f"setenv x {quote(value, hush=False)}") == value


@pytest.mark.parametrize("value", ["", " lead", "trail ", "a  b"])
def test_simple_parser_cannot_keep_empty_or_extra_blanks(value: str) -> None:
    with pytest.raises(ValueError, match="simple parser"):
        quote(value, hush=False)


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "tab\there", "\x03", "del\x7f", "€"])
def test_untypeable_characters_are_refused(value: str) -> None:
    for hush in (True, False):
        with pytest.raises(ValueError, match="cannot be typed"):
            quote(value, hush)


@pytest.mark.parametrize(("name", "value", "hush", "command"), [
    ("bootdelay", "0", True, "setenv bootdelay 0"),
    ("silent", None, True, "setenv silent"),
    ("bootargs", "console=ttyS0,115200 quiet", True,
     "setenv bootargs 'console=ttyS0,115200 quiet'"),
    ("bootargs", "console=ttyS0,115200 quiet", False,
     "setenv bootargs console=ttyS0,115200 quiet"),
    ("extra", "", True, "setenv extra ''"),
    (".flags", "ethaddr:mc", True, "setenv .flags ethaddr:mc"),
])
def test_setenv_command(name: str, value: str | None, hush: bool, command: str) -> None:
    assert setenv_command(name, value, hush) == command


@pytest.mark.parametrize("name", ["", "-f", "a b", "a=b", "x;reset", "$x", "a'b"])
def test_names_that_cannot_be_typed_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="variable name"):
        check_name(name)
    with pytest.raises(ValueError):
        setenv_command(name, "1")


def test_printenv_of_the_real_qemu_board() -> None:
    env = parse_printenv(PRINTENV)
    assert len(env) == 53                                  # every line but echo, size, prompt
    assert list(env)[:3] == ["arch", "baudrate", "board"]      # U-Boot sorts by name
    assert env["bootargs"] == "console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait"
    assert env["bootcmd"] == "run distro_bootcmd"
    assert env["bootdelay"] == "2"
    assert env["boot_targets"] == "qfw usb0 scsi0 virtio0 nvme0 dhcp "   # trailing blank kept
    assert env["fdt_high"] == "0xffffffff"
    assert "mtdids" not in env            # empty in the default environment: not stored
    assert env["bootcmd_qfw"].startswith(" if qfw load $kernel_addr_r")
    assert "printenv" not in env and "Environment size" not in str(env)


def test_printenv_unescapes_newlines_and_backslashes() -> None:
    text = ("=> printenv\r\n"
            "a=C:\\\\dir\r\n"
            "script=echo one\\\n"
            "echo two\r\n"
            "tail=x\\\\\r\n"
            "\r\n"
            "Environment size: 60/262140 bytes\r\n=> ")
    assert parse_printenv(text) == {"a": "C:\\dir", "script": "echo one\necho two",
                                    "tail": "x\\"}
    assert parse_printenv("=> printenv a\r\na=C:\\\\dir\r\n=> ", escaped=False) \
        == {"a": "C:\\\\dir"}


def test_printenv_ignores_prompts_echo_and_noise() -> None:
    text = "\r\n=> printenv bootdelay verify\rbootdelay=0\rverify=n\r\n## Error: x\n=> "
    assert parse_printenv(text, escaped=False) == {"bootdelay": "0", "verify": "n"}


def test_run_chain_follows_the_distro_boot_scripts() -> None:
    env = parse_printenv(PRINTENV)
    names = [path[-1] for path in run_chain(env)]
    assert names[:2] == ["bootcmd", "distro_bootcmd"]
    # `run bootcmd_${target}` with the loop variable unset: every bootcmd_* is followed.
    assert {"bootcmd_qfw", "bootcmd_virtio0", "bootcmd_dhcp"} <= set(names)
    assert ("bootcmd", "distro_bootcmd", "bootcmd_virtio0", "virtio_boot") in run_chain(env)
    assert {"scan_dev_for_boot", "boot_a_script"} <= set(names)
    assert len(names) == len(set(names))
    assert run_chain({}) == []


def test_run_chain_stops_at_loops_and_unset_scripts() -> None:
    env = {"bootcmd": "run a missing; if true; then run b; fi", "a": "run bootcmd", "b": "x"}
    assert run_chain(env) == [("bootcmd",), ("bootcmd", "a"), ("bootcmd", "b")]


def test_expand() -> None:
    env = {"console": "ttyS0,115200", "extra": "quiet"}
    assert expand("console=${console} $extra ${unset}x", env) == "console=ttyS0,115200 quiet x"


def test_script_references() -> None:
    env = {"a": "setenv bootargs ${bootargs} ${extra}", "b": 'test -z "${bootargs}"',
           "c": "echo '${notexpanded}' \\$x ${x2}", "d": 'echo "$console" $quiet'}
    assert script_references(env) == {"bootargs": True, "extra": True, "x2": True,
                                      "console": False, "quiet": True}
    assert script_references({"b": env["b"]}) == {"bootargs": False}
    qemu = script_references(parse_printenv(PRINTENV))
    assert qemu["devtype"] and "bootargs" not in qemu


@pytest.mark.board
def test_real_uboot_reads_back_every_value(board_url: str) -> None:
    import serial

    console = serial.serial_for_url(board_url, timeout=0.1)

    def until(marker: bytes, limit: float = 60) -> bytes:
        data, deadline = b"", time.monotonic() + limit
        while marker not in data:
            data += console.read(4096)
            assert time.monotonic() < deadline, data[-300:]
        return data

    try:
        until(b"Hit any key to stop autoboot")
        console.write(b" ")
        until(b"=> ")
        for index, value in enumerate(TRICKY):
            console.write(f"{setenv_command(f't{index}', value)}\r".encode("latin-1"))
            until(b"=> ", 10)
        console.write(b"printenv\r")
        env = parse_printenv(until(b"bytes\r\n=> ", 10).decode("latin-1"))
        console.write(b"printenv t3 t7\r")
        single = parse_printenv(until(b"=> ", 10).decode("latin-1"), escaped=False)
    finally:
        console.close()
    assert {f"t{i}": env.get(f"t{i}") for i in range(len(TRICKY))} \
        == {f"t{i}": value for i, value in enumerate(TRICKY)}
    assert single == {"t3": TRICKY[3], "t7": TRICKY[7]}
