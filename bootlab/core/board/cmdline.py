"""The kernel command line: editing it token by token, and finding where a board keeps it.

`Cmdline` is the line as the kernel splits it (blanks separate, double quotes group:
`foo="a b"` is one parameter); edits keep every other token and the order, compare names as
the kernel does (`-` and `_` alike) and leave what follows `--` (init's arguments) alone.

Where the arguments live differs by board. The kernel gets `bootargs`; many boards pass it as
they find it (the QEMU board, distro boot), but vendor `bootcmd`s often rebuild it first:
`setenv bootargs ${bootargs} ${extra}`, `setenv bootargs console=${console} ${optargs}
root=...`, or a literal `setenv bootargs console=ttyS0,115200 root=/dev/mtdblock2`.
`locate_bootargs` follows `bootcmd`'s `run` chain to the `setenv bootargs` that builds the line
and returns a `Target` that knows which variable each argument comes from, so an edit changes
the right one: added arguments go to a variable the template appends (`extra`, `optargs`)
or to `bootargs` itself; an argument that comes from the template's own text is changed by
rewriting that `setenv bootargs` inside its script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from bootlab.core.board.hush import expand, run_chain

_BAUD_OPTIONS = re.compile(r"(\d+)([noe]\d?r?)?")
_STANDALONE_REF = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_SETENV_BOOTARGS = re.compile(r"(?<![\w$.-])(?:setenv|env\s+set)\s+(?:-f\s+)?bootargs(?=[\s;]|$)")
_EXTRA_NAME = re.compile(r"extra|opt|add|user|custom|more|other", re.IGNORECASE)


def split_cmdline(text: str) -> list[str]:
    """Split a command line into parameters as the kernel does (double quotes group)."""
    tokens: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char.isspace() and not quoted:
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        tokens.append("".join(current))
    return tokens


def token_name(token: str) -> str:
    """A parameter's name: the text before `=`, without quotes (`"foo=a b"` -> `foo`)."""
    return token.replace('"', "").split("=", 1)[0]


def token_value(token: str) -> str | None:
    """A parameter's value without its quotes; None for a flag (no `=`)."""
    bare = token[1:-1] if len(token) > 1 and token[0] == token[-1] == '"' else token
    if "=" not in bare:
        return None
    value = bare.split("=", 1)[1]
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value


def _same(a: str, b: str) -> bool:
    return a.replace("-", "_") == b.replace("-", "_")


def render_param(name: str, value: str | None) -> str:
    """`name`, or `name=value` (quoted when the value has blanks).

    Raises:
        ValueError: the value holds a double quote, which the kernel cannot take.
    """
    if value is None:
        return name
    if '"' in value:
        raise ValueError(f"{name}={value}: the kernel command line cannot carry a '\"'")
    return f'{name}="{value}"' if re.search(r"\s", value) or not value else f"{name}={value}"


@dataclass(frozen=True)
class Cmdline:
    """A kernel command line as its parameters, in order. Edits return a new line."""

    tokens: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> Cmdline:
        """The parameters of `text` (None: an empty line)."""
        return cls(tuple(split_cmdline(text or "")))

    def __str__(self) -> str:
        return " ".join(self.tokens)

    def _kernel_part(self) -> int:
        """Number of tokens before `--` (the rest is for init)."""
        return self.tokens.index("--") if "--" in self.tokens else len(self.tokens)

    def _indexes(self, name: str) -> list[int]:
        return [i for i in range(self._kernel_part()) if _same(token_name(self.tokens[i]), name)]

    def has(self, name: str) -> bool:
        """The parameter is present (as a flag or with a value)."""
        return bool(self._indexes(name))

    def get(self, name: str) -> str | None:
        """The value of the last `name=...` ("" for a bare flag); None when absent."""
        indexes = self._indexes(name)
        if not indexes:
            return None
        value = token_value(self.tokens[indexes[-1]])
        return "" if value is None else value

    def set(self, name: str, value: str | None = None) -> Cmdline:
        """Set `name` (a flag when `value` is None): the first occurrence is replaced in place
        and later ones dropped; a new parameter goes at the end (before `--`)."""
        token = render_param(name, value)
        indexes = self._indexes(name)
        tokens = list(self.tokens)
        if indexes:
            tokens[indexes[0]] = token
            for index in reversed(indexes[1:]):
                del tokens[index]
        else:
            tokens.insert(self._kernel_part(), token)
        return Cmdline(tuple(tokens))

    def remove(self, name: str) -> Cmdline:
        """Drop every occurrence of `name`."""
        drop = set(self._indexes(name))
        return Cmdline(tuple(t for i, t in enumerate(self.tokens) if i not in drop))

    def with_console_baud(self, baud: int) -> Cmdline:
        """Every serial `console=` (and `earlycon=` ending in a rate) set to `baud`."""
        tokens = list(self.tokens)
        for index in range(self._kernel_part()):
            tokens[index] = _token_with_baud(tokens[index], baud)
        return Cmdline(tuple(tokens))


def _token_with_baud(token: str, baud: int) -> str:
    name = token_name(token)
    if name not in ("console", "earlycon"):
        return token
    fields = token.split(",")
    # console=ttyS0,115200n8: the options follow the device; earlycon=uart8250,mmio32,ADDR,RATE
    if len(fields) < 2 or (name == "earlycon" and len(fields) < 3):
        return token
    options = _BAUD_OPTIONS.fullmatch(fields[-1])
    if options is None:
        return token
    fields[-1] = f"{baud}{options.group(2) or ''}"
    return ",".join(fields)


def with_console_baud(cmdline: str, baud: int) -> str:
    """`cmdline` with its serial consoles' rate set to `baud` (`console=ttyS0,115200n8` ->
    `console=ttyS0,921600n8`); consoles without a rate (`console=tty0`) are left alone."""
    return str(Cmdline.parse(cmdline).with_console_baud(baud))


@dataclass(frozen=True)
class Edit:
    """One change to the command line."""

    op: Literal["set", "remove", "baud"]
    name: str = ""
    value: str | None = None
    """For "set": the value (None: a flag)."""
    baud: int = 0
    """For "baud": the new console rate."""


@dataclass(frozen=True)
class Applied:
    """The result of edits: variables to set, and the line the kernel will then get."""

    changes: dict[str, str]
    """Variable -> new value (only those that change)."""
    cmdline: str
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Target:
    """Where a board's kernel command line comes from (see the module docstring)."""

    template: str = "${bootargs}"
    """What `setenv bootargs` is given; `${bootargs}` when bootargs is passed as it is."""
    source: str | None = None
    """The variable holding that `setenv bootargs` (None: nothing rebuilds bootargs)."""
    chain: tuple[str, ...] = ("bootcmd",)
    """Variables `run` from bootcmd down to `source`."""
    add_to: str | None = "bootargs"
    """The variable added arguments go to; None: they are added to the template itself."""
    span: tuple[int, int] | None = None
    """Where the template's text sits in the source variable's value."""
    quote: str | None = ""
    """How the template is quoted there: "", '"' or "'"; None when it cannot be rewritten."""
    others: tuple[str, ...] = ()
    """Other scripts that also set bootargs (another boot path)."""

    @property
    def var(self) -> str:
        """The variable that receives added arguments (the template's script if none)."""
        return self.add_to or self.source or "bootargs"

    def describe(self) -> str:
        """One line for the preview: where the arguments go and why."""
        if self.source is None:
            return "bootargs (passed to the kernel as it is)"
        route = " -> ".join(self.chain)
        where = (f"{self.add_to}, which" if self.add_to else
                 f"the `setenv bootargs` in {self.source}, which")
        return f"{where} {route} builds into bootargs: setenv bootargs {self.template}"

    def cmdline(self, env: dict[str, str], fallback: str | None = None) -> str:
        """The command line the kernel gets with this environment.

        Args:
            env: the U-Boot environment.
            fallback: the line to assume when bootargs is unset (e.g. the "Kernel command
                line:" seen in the log, which a boot script's default gave).
        """
        return " ".join(split_cmdline(expand(self.template, self._env(env, fallback))))

    def _env(self, env: dict[str, str], fallback: str | None) -> dict[str, str]:
        if fallback is not None and "bootargs" not in env:
            return {**env, "bootargs": fallback}
        return env

    def apply(self, env: dict[str, str], edits: list[Edit],
              fallback: str | None = None) -> Applied:
        """Work out which variables change so that the command line gets `edits`.

        An argument is changed where it comes from: a variable the template expands as a
        whole word (`${extra}`, `${bootargs}`), a variable that is a parameter's whole value
        (`console=${console}`), or the template's text. New arguments go to `add_to`.
        """
        values = self._env(env, fallback)
        words = split_cmdline(self.template)
        lines: dict[str, Cmdline] = {}
        for word in words:
            ref = _standalone(word)
            if ref is not None:
                lines[ref] = Cmdline.parse(values.get(ref))
        if self.add_to is not None and self.add_to not in lines:
            lines[self.add_to] = Cmdline.parse(values.get(self.add_to))
        changed_vars: dict[str, str] = {}
        warnings: list[str] = []
        done: list[Edit] = []
        for edit in edits:
            try:
                self._edit(edit, words, lines, values, changed_vars)
                done.append(edit)
            except ValueError as error:
                warnings.append(f"{error}: left out")
        changes = {name: str(line) for name, line in lines.items()
                   if str(line) != " ".join(split_cmdline(values.get(name, "")))}
        changes.update(changed_vars)
        template = " ".join(words)
        if template != " ".join(split_cmdline(self.template)):
            rewritten = self._rewrite(template, env, warnings)
            if rewritten is not None and self.source is not None:
                changes[self.source] = rewritten
            else:
                template = self.template
        after = {**values, **changes}
        line = " ".join(split_cmdline(expand(template, after)))
        result = Cmdline.parse(line)
        for edit in done:
            if edit.op == "remove" and result.has(edit.name):
                warnings.append(f"{edit.name} stays on the command line: bootlab could not "
                                f"find where it comes from in `setenv bootargs {self.template}`")
            elif edit.op == "set" and result.get(edit.name) != (edit.value or ""):
                shown = edit.name if edit.value is None else f"{edit.name}={edit.value}"
                warnings.append(f"{shown} may not take effect: "
                                f"the command line will read {result.get(edit.name)!r} for it")
        return Applied(changes, line, warnings)

    def _edit(self, edit: Edit, words: list[str], lines: dict[str, Cmdline],
              values: dict[str, str], changed_vars: dict[str, str]) -> None:
        if edit.op == "baud":
            for name, line in lines.items():
                lines[name] = line.with_console_baud(edit.baud)
            for index, word in enumerate(words):
                if token_name(word) not in ("console", "earlycon") or _standalone(word):
                    continue
                ref = _value_ref(word)
                if ref is not None and ref in values:
                    line = Cmdline.parse(f"console={values[ref]}").with_console_baud(edit.baud)
                    new = str(line)[len("console="):]
                    if new != values[ref]:
                        changed_vars[ref] = new
                elif ref is None:
                    words[index] = _token_with_baud(word, edit.baud)
            return
        holders = [name for name, line in lines.items() if line.has(edit.name)]
        in_text = [i for i, w in enumerate(words)
                   if not _standalone(w) and _same(token_name(w), edit.name)]
        if edit.op == "remove":
            for name in holders:
                lines[name] = lines[name].remove(edit.name)
            for index in reversed(in_text):
                del words[index]
            return
        if in_text:
            index = in_text[-1]
            ref = _value_ref(words[index])
            if ref is not None and edit.value is not None:
                # `rootfstype=${mmcrootfstype}` with mmcrootfstype="ext4 rootwait": keep the rest
                rest = split_cmdline(values.get(ref, ""))[1:]
                value = render_param(edit.name, edit.value).split("=", 1)[1]
                changed_vars[ref] = " ".join([value, *rest])
            elif token_value(words[index]) != edit.value:
                words[index] = render_param(edit.name, edit.value)
            for name in holders:  # a later copy in a variable would override ours
                lines[name] = lines[name].remove(edit.name)
        elif holders:
            lines[holders[-1]] = lines[holders[-1]].set(edit.name, edit.value)
        elif self.add_to is not None:
            lines[self.add_to] = lines[self.add_to].set(edit.name, edit.value)
        else:
            words.append(render_param(edit.name, edit.value))

    def _rewrite(self, template: str, env: dict[str, str],
                 warnings: list[str]) -> str | None:
        """The source script with its `setenv bootargs` text replaced, or None (warned)."""
        if self.source is None or self.span is None or self.quote is None:
            warnings.append("the command line's own text cannot be changed here: "
                            f"`setenv bootargs {self.template}` is quoted in a way bootlab "
                            "does not rewrite")
            return None
        forbidden = {"": "'\";\\#", '"': '"\\', "'": "'\\"}[self.quote]
        bad = sorted({c for c in template if c in forbidden})
        if bad:
            warnings.append(f"cannot write {' '.join(bad)} into `setenv bootargs` of "
                            f"{self.source}: that change is left out")
            return None
        script = env[self.source]
        start, end = self.span
        return f"{script[:start]}{self.quote}{template}{self.quote}{script[end:]}"


def _standalone(word: str) -> str | None:
    match = _STANDALONE_REF.fullmatch(word)
    return (match.group(1) or match.group(2)) if match else None


def _value_ref(word: str) -> str | None:
    """The variable that is the whole value of `name=${var}`, if it is."""
    value = token_value(word)
    return _standalone(value) if value is not None else None


def _bootargs_setting(script: str) -> tuple[str, tuple[int, int], str | None] | None:
    """The text given to the first `setenv bootargs` in `script`: (text, span, quote)."""
    for match in _SETENV_BOOTARGS.finditer(script):
        start = match.end()
        while start < len(script) and script[start] in " \t":
            start += 1
        end = start
        quote: str | None = None
        while end < len(script):
            char = script[end]
            if quote:
                if char == quote:
                    quote = None
            elif char in "'\"":
                quote = char
            elif char in ";\n":
                break
            end += 1
        text = script[start:end].rstrip()
        if not text:
            continue  # `setenv bootargs` alone deletes it
        span = (start, start + len(text))
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" \
                and text[0] not in text[1:-1]:
            return text[1:-1], span, text[0]
        if any(q in text for q in "'\""):
            return text.replace("'", "").replace('"', ""), span, None
        return text, span, ""
    return None


def locate_bootargs(env: dict[str, str]) -> Target:
    """Where the kernel command line comes from, following `bootcmd`'s `run` chain.

    No `setenv bootargs` on the way: bootargs is passed as it is. Otherwise the first one
    found (in the order bootcmd would get there) is the template; arguments are added to the
    variable it appends as a whole word, preferring names like `extra`/`optargs`, else to
    `bootargs` when the template starts from it, else to the template's own text.
    """
    found: list[tuple[tuple[str, ...], tuple[str, tuple[int, int], str | None]]] = []
    for path in run_chain(env):
        setting = _bootargs_setting(env[path[-1]])
        if setting is not None:
            found.append((path, setting))
    if not found:
        return Target()
    path, (template, span, quote) = found[0]
    refs = [ref for ref in (_standalone(w) for w in split_cmdline(template)) if ref]
    extra = [ref for ref in refs if ref != "bootargs"]
    preferred = [ref for ref in extra if _EXTRA_NAME.search(ref)]
    candidates = preferred or extra or [ref for ref in refs if ref == "bootargs"]
    add_to = candidates[-1] if candidates else None
    others = tuple(p[-1] for p, _ in found[1:] if p[-1] != path[-1])
    return Target(template, path[-1], path, add_to, span, quote, others)
