"""Typing values at the U-Boot prompt exactly, and reading `printenv` back.

bootlab changes a board's settings by typing `setenv NAME VALUE` at `=> `. A kernel command
line is full of spaces, `=` and sometimes `$`, `;` or quotes, and what U-Boot stores must be
exactly the value shown to the user, so every value is quoted for the parser that reads it:

- hush (CONFIG_HUSH_PARSER, nearly every board; both the 2005 "old" hush and the 2021 one
  that `cli set` selects): the value goes in single quotes, where `$`, `;`, `"` and blanks are
  plain characters. Two characters are written outside the quotes, escaped with a backslash:
  `'` (a single quote cannot appear inside single quotes) and `\\` (the old hush drops a
  backslash even inside single quotes, the new one does not: `\\\\` outside quotes means one
  backslash to both). So `a'b` is typed `'a'\\''b'`.
- the simple parser (hush off): quotes do not group words, one level of backslashes is
  removed, `$`, `'` and `;` are escaped with a backslash, and after a backslash that stood for
  itself the next backslash is taken literally (the parser remembers only the previous
  character). Words are split at blanks and `setenv` joins them with one space, so values with
  leading, trailing or repeated blanks, or empty values, cannot be typed: `ValueError`.

Characters below 0x20 and DEL cannot be typed at all (the line editor acts on them: Enter,
Tab completion, Ctrl-C, backspace), nor can characters beyond latin-1.

A value is stored exactly, but the old hush re-reads the text of a variable wherever a script
expands it in a command (`setenv bootargs ${bootargs} ${extra}`, a boot script's
`test -z "${bootargs}"`): there `'` and `\\` (and `"` outside double quotes) act as quotes and
escapes again. On the QEMU board a `'` in bootargs made boot.scr fail with "syntax error" and
fall back to its default command line. `script_references` finds where variables are expanded
so callers can warn.

`printenv` without arguments prints `name=value` lines sorted by name, escaping a newline in a
value as `\\` + newline and a backslash as `\\\\` (as U-Boot 2023.01 does), then
`Environment size: N/M bytes`. `parse_printenv` reads that, tolerating the echoed command,
prompts, CR LF line ends and blank lines; `printenv NAME` prints values unescaped
(`escaped=False`).
"""

from __future__ import annotations

import re

_BARE = re.compile(r"[A-Za-z0-9_./:,=+@%^-]+")
"""Values made only of these need no quoting in either parser."""

_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.:+@#-]*")
"""Variable names bootlab will type (U-Boot allows more; these need no quoting)."""

_SIZE_LINE = re.compile(r"^Environment size: \d+/\d+ bytes\s*$")
_ENTRY = re.compile(r"^([^\s=]+)=(.*)$")


def _check_typeable(value: str) -> None:
    for char in value:
        code = ord(char)
        if code < 0x20 or code == 0x7F or code > 0xFF:
            raise ValueError(f"{value!r}: character {char!r} cannot be typed at the U-Boot "
                             "prompt")


def quote(value: str, hush: bool = True) -> str:
    """The word that U-Boot's parser reads back as exactly `value`.

    Args:
        value: the text wanted.
        hush: the board's U-Boot uses the hush parser (else the simple one; then the word is
            only meant as `setenv`'s value, whose words `setenv` joins with one space).

    Raises:
        ValueError: the value cannot be typed (control characters), or not for the simple
            parser (empty, leading/trailing/repeated blanks).
    """
    _check_typeable(value)
    if value and _BARE.fullmatch(value):
        return value
    return _quote_hush(value) if hush else _quote_simple(value)


def _quote_hush(value: str) -> str:
    if not value:
        return "''"
    out: list[str] = []
    run: list[str] = []
    for char in value:
        if char in "'\\":
            if run:
                out.append("'" + "".join(run) + "'")
                run = []
            out.append("\\" + char)
        else:
            run.append(char)
    if run:
        out.append("'" + "".join(run) + "'")
    return "".join(out)


def _quote_simple(value: str) -> str:
    if not value:
        raise ValueError("the simple parser cannot pass an empty value (hush can)")
    if value != value.strip(" ") or "  " in value:
        raise ValueError(f"{value!r}: the simple parser joins words with single spaces, so "
                         "leading, trailing or repeated blanks cannot be kept")
    out: list[str] = []
    literal_backslash = False  # the parser's "previous character was a backslash" state
    for char in value:
        if literal_backslash:
            # After a backslash the parser neither starts an escape nor treats $ ' ; specially.
            out.append(char)
        elif char in "\\$';":
            out.append("\\" + char)
        else:
            out.append(char)
        literal_backslash = char == "\\"
    return "".join(out)


def check_name(name: str) -> str:
    """Return `name` if bootlab can type it as a variable name, else raise ValueError."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a variable name bootlab can type (letters, digits "
                         "and _ . : + @ # -, not starting with - : + @ #)")
    return name


def setenv_command(name: str, value: str | None, hush: bool = True) -> str:
    """The command that sets variable `name` to `value` (None: deletes it, `setenv name`).

    Raises:
        ValueError: the name or the value cannot be typed (see `quote`).
    """
    check_name(name)
    if value is None:
        return f"setenv {name}"
    return f"setenv {name} {quote(value, hush)}"


def parse_printenv(text: str, escaped: bool = True) -> dict[str, str]:
    """Variables from the output of `printenv` (all of them, or `printenv A B`).

    Args:
        text: the console output; the echoed command, prompts (`=> `), blank lines and the
            `Environment size:` line are skipped; CR LF and lone CR line ends are accepted.
        escaped: the output of a bare `printenv`, where U-Boot escapes a newline in a value
            as backslash + newline and a backslash as two. `printenv NAME` prints values as
            they are: pass False.

    Returns:
        name -> value, in the order printed.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        match = _ENTRY.match(line)
        if match is None or _SIZE_LINE.match(line):
            continue
        name, value = match.groups()
        if escaped:
            # An odd number of trailing backslashes: the newline itself was escaped.
            while _odd_trailing_backslashes(value) and index < len(lines):
                value += "\n" + lines[index]
                index += 1
            value = _unescape(value)
        found[name] = value
    return found


def _odd_trailing_backslashes(text: str) -> bool:
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


_VAR_REF = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_RUN = re.compile(r"(?<![\w$.-])run\s+([^;\n]+)")
_KEYWORDS = frozenset({"then", "else", "elif", "fi", "do", "done", "||", "&&", "|"})


def expand(text: str, env: dict[str, str]) -> str:
    """`text` with `${name}` and `$name` replaced by their values (unset: empty, as U-Boot)."""
    return _VAR_REF.sub(lambda m: env.get(m.group(1) or m.group(2), ""), text)


def run_chain(env: dict[str, str], start: str = "bootcmd",
              max_depth: int = 10) -> list[tuple[str, ...]]:
    """The scripts `start` runs, depth first in the order they appear: each as its path.

    `run a b` is followed into `a` and `b`; a name with variables is expanded from `env`,
    and where a variable is unset (a loop variable: `run bootcmd_${target}`) every
    variable whose name fits is followed. Each script is visited once.

    Returns:
        Paths from `start`, e.g. `("bootcmd",)`, `("bootcmd", "distro_bootcmd")`, ...;
        empty when `start` is unset.
    """
    paths: list[tuple[str, ...]] = []
    seen: set[str] = set()

    def visit(path: tuple[str, ...]) -> None:
        name = path[-1]
        if name in seen or name not in env:
            return
        seen.add(name)
        paths.append(path)
        if len(path) > max_depth:
            return
        for target in _run_targets(env[name], env):
            visit((*path, target))

    visit((start,))
    return paths


def _run_targets(script: str, env: dict[str, str]) -> list[str]:
    targets: list[str] = []
    for match in _RUN.finditer(script):
        for word in match.group(1).split():
            if word in _KEYWORDS:
                break
            word = word.strip("'\"")
            if not _VAR_REF.search(word):
                targets.append(word)
                continue
            parts = _VAR_REF.split(word)
            # split() yields text, group 1, group 2, text, ...: rebuild as a pattern.
            pattern = ""
            for index in range(0, len(parts), 3):
                pattern += re.escape(parts[index])
                if index + 1 < len(parts):
                    ref = parts[index + 1] or parts[index + 2]
                    pattern += re.escape(env[ref]) if ref in env else r"\w*"
            targets += [name for name in env if re.fullmatch(pattern, name)]
    return targets


def script_references(env: dict[str, str]) -> dict[str, bool]:
    """Variables that the environment's scripts expand: name -> True when at least one
    expansion is outside double quotes (then a `"` in its value is re-read as a quote too).

    Text inside single quotes is not expanded and is skipped.
    """
    found: dict[str, bool] = {}
    for script in env.values():
        index, double = 0, False
        while index < len(script):
            char = script[index]
            if char == "'" and not double:
                end = script.find("'", index + 1)
                index = len(script) if end < 0 else end + 1
                continue
            if char == '"':
                double = not double
            elif char == "\\":
                index += 1
            elif char == "$":
                match = _VAR_REF.match(script, index)
                if match is not None:
                    name = match.group(1) or match.group(2)
                    found[name] = found.get(name, False) or not double
                    index = match.end()
                    continue
            index += 1
    return found
