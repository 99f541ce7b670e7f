"""The layers are a contract: which package may import which, checked on every module of
bootlab/ by reading its imports (an AST walk, imports inside functions included), and the core
loads no UI or I/O library when it runs.

The contract (docs/design.md):

- each top-level package imports only the packages `LAYERS` gives it (and itself): the CLI is
  the top and only `bootlab.__main__` imports it; the app and the commands never import each
  other; board control imports no command or app, the transports nothing of bootlab's; the
  core nothing outside itself, nor textual, serial, asyncio or rich;
- within the core, each package imports only the packages its docstring names ("Within the
  core it may import: ...");
- the app's widgets reach no transport, not even through another module;
- only `bootlab.core.analysis.regex_parse` touches the `re` module's internals.
"""

from __future__ import annotations

import ast
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import bootlab
import bootlab.core
import bootlab.session
import bootlab.ui.widgets

PACKAGE = Path(bootlab.__file__).resolve().parent
CORE = sorted(m.name for m in pkgutil.walk_packages(bootlab.core.__path__, "bootlab.core.")
              if not m.ispkg)
SESSION = sorted(m.name for m in pkgutil.iter_modules(bootlab.session.__path__,
                                                     "bootlab.session."))
WIDGETS = sorted(m.name for m in pkgutil.iter_modules(bootlab.ui.widgets.__path__,
                                                      "bootlab.ui.widgets."))

LAYERS = {
    "bootlab": (),
    "bootlab.__main__": ("bootlab.cli",),
    "bootlab.cli": ("bootlab.commands", "bootlab.ui", "bootlab.exitcodes"),
    "bootlab.exitcodes": (),
    "bootlab.commands": ("bootlab.session", "bootlab.control", "bootlab.transports",
                         "bootlab.core", "bootlab.exitcodes"),
    "bootlab.ui": ("bootlab.session", "bootlab.control", "bootlab.transports", "bootlab.core",
                   "bootlab.exitcodes"),
    "bootlab.ui.widgets": ("bootlab.core", "bootlab.ui.contrast", "bootlab.ui.keys",
                           "bootlab.session.phase_marks"),
    "bootlab.session": ("bootlab.control", "bootlab.transports", "bootlab.core",
                        "bootlab.exitcodes"),
    "bootlab.control": ("bootlab.transports", "bootlab.core"),
    "bootlab.transports": (),
    "bootlab.core": (),
}
"""Package -> the bootlab packages its modules may import besides their own package and the
`bootlab` module itself (its version); the most specific entry applies."""
NEVER = {"bootlab.core": ("textual", "serial", "asyncio", "rich"),
         "bootlab.session": ("textual", "rich")}
"""Package -> libraries it never imports."""
RE_INTERNALS = ("re._parser", "re._constants", "re._compiler", "re._casefix", "sre_parse",
                "sre_constants", "sre_compile")
RE_OWNER = "bootlab.core.analysis.regex_parse"
LABGRID = ("labgrid", "grpc")
LABGRID_OWNER = "bootlab.transports.place_keeper"
"""The one module that touches labgrid (the optional extra) and its gRPC."""
WIDGETS_NEVER_REACH = ("bootlab.transports",)
_MAY_IMPORT = re.compile(r"Within the core it may import:\s*(.*?)\.\s*$", re.DOTALL)


@dataclass(frozen=True)
class Import:
    """One import statement's target, where it is written."""

    module: str
    """The importing module."""
    target: str
    """The module imported (`from a import b` is `a.b` when that is a module)."""
    path: Path
    line: int


def _name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package at `root`, by dotted name."""
    return {_name(path, root): path for path in sorted(root.rglob("*.py"))}


def imports(root: Path = PACKAGE) -> list[Import]:
    """Every import in the package at `root`: `import`, `from ... import` (relative ones
    resolved) and `importlib.import_module("...")` with a literal name."""
    known = modules(root)
    found: list[Import] = []
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                           for a in node.names]
            elif isinstance(node, ast.Call) and _is_import_module(node):
                argument = node.args[0]
                assert isinstance(argument, ast.Constant)
                targets = [str(argument.value)]
            found += [Import(module, target, path, node.lineno) for target in targets]
    return found


def _is_import_module(node: ast.Call) -> bool:
    function = node.func
    named = (isinstance(function, ast.Attribute) and function.attr == "import_module") or \
        (isinstance(function, ast.Name) and function.id == "import_module")
    return named and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
        and isinstance(node.args[0].value, str)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def core_contract(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Core package -> the core packages it may import, as its docstring says."""
    contract: dict[str, set[str]] = {}
    for init in sorted((root / "core").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        said = _MAY_IMPORT.search(doc)
        assert said is not None, f"{init}: the docstring says not what it may import " \
                                 "('Within the core it may import: `a`, `b`.' or 'nothing.')"
        contract[init.parent.name] = set(re.findall(r"`(\w+)`", said.group(1)))
    return contract


def violations(root: Path = PACKAGE) -> list[str]:
    """Every import that breaks the contract, as `file:line: module imports target (why)`."""
    contract = core_contract(root)
    out: list[str] = []

    def bad(item: Import, why: str) -> None:
        out.append(f"{item.path.relative_to(root.parent)}:{item.line}: {item.module} imports "
                   f"{item.target} ({why})")

    for item in imports(root):
        layer = max((name for name in LAYERS if _within(item.module, name)), key=len)
        own = layer != "bootlab" and _within(item.target, layer)
        if _within(item.target, "bootlab") and item.target != "bootlab" and not own \
                and not any(_within(item.target, name) for name in LAYERS[layer]):
            bad(item, f"{layer} may import only itself"
                      + "".join(f", {name}" for name in LAYERS[layer]))
        for library in NEVER.get(layer, ()):
            if _within(item.target, library):
                bad(item, f"{layer} never imports {library}")
        if item.target in RE_INTERNALS and item.module != RE_OWNER:
            bad(item, f"the re module's internals are used in {RE_OWNER} only")
        if any(_within(item.target, lib) for lib in LABGRID) and item.module != LABGRID_OWNER:
            bad(item, f"labgrid is used in {LABGRID_OWNER} only")
        parts = item.module.split(".")
        if len(parts) > 2 and parts[1] == "core" and _within(item.target, "bootlab.core"):
            own, target_parts = parts[2], item.target.split(".")
            if own not in contract:
                bad(item, f"bootlab.core.{own} is in no package of the contract")
            elif len(target_parts) > 2 and target_parts[2] not in {own, *contract[own]}:
                allowed = ", ".join(sorted(contract[own])) or "nothing"
                bad(item, f"core package {own} may import only: {allowed}")
    graph: dict[str, set[str]] = {}
    for item in imports(root):
        graph.setdefault(item.module, set()).add(item.target)
    for widget, path in modules(root).items():
        reached = sorted(m for m in _reachable(widget, graph)
                         if any(_within(m, target) for target in WIDGETS_NEVER_REACH))
        if _within(widget, "bootlab.ui.widgets") and reached:
            out.append(f"{path.relative_to(root.parent)}: {widget} reaches {', '.join(reached)} "
                       "(widgets never reach the transports, not even through another module)")
    return out


def _reachable(start: str, graph: dict[str, set[str]]) -> Iterator[str]:
    seen, stack = {start}, [start]
    while stack:
        for target in graph.get(stack.pop(), ()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
                yield target


def test_every_import_keeps_to_the_layers() -> None:
    found = violations()
    assert not found, "imports against the layering contract:\n" + "\n".join(found)


def test_the_contract_covers_every_core_package() -> None:
    contract = core_contract()
    assert set(contract) == {"files", "capture", "analysis", "recording", "board", "advice",
                             "render"}
    assert "analysis" not in contract["capture"] and "analysis" in contract["render"]
    assert not [m for m in CORE if m.count(".") < 3], "every core module is in a package"


PLANTED = {
    "core/capture/leak.py": (
        '"""A capture module reaching up."""\n\n'
        "from bootlab.core.analysis.pipeline import analyze\n"
        "import textual\n\n\n"
        "def show() -> None:\n"
        "    from bootlab.ui.app import BootlabApp\n"),
    "ui/widgets/port_pane.py": (
        '"""A widget reading a port through a helper."""\n\n'
        "from bootlab.session.live import LiveLink\n"),
    "commands/peek.py": (
        '"""A command that reads a pattern\'s insides, its exit code and the app."""\n\n'
        "import re._parser\n\n"
        "from ..cli import OK\n"
        "from bootlab.ui import launch\n"),
    "control/farm.py": (
        '"""Board control reaching for labgrid itself."""\n\n'
        "from labgrid.remote.client import ClientSession\n"),
    "session/popup.py": (
        '"""A session module that shows a dialog itself."""\n\n'
        "from textual.screen import ModalScreen\n\n"
        "from bootlab.ui.screens.dialogs import ConfirmDialog\n"),
}
"""Modules with forbidden imports, planted in a copy of the package."""
CAUGHT = [
    "bootlab/commands/peek.py:3: bootlab.commands.peek imports re._parser (the re module's "
    "internals are used in bootlab.core.analysis.regex_parse only)",
    "bootlab/commands/peek.py:5: bootlab.commands.peek imports bootlab.cli (bootlab.commands "
    "may import only itself, bootlab.session, bootlab.control, bootlab.transports, "
    "bootlab.core, bootlab.exitcodes)",
    "bootlab/commands/peek.py:6: bootlab.commands.peek imports bootlab.ui.launch "
    "(bootlab.commands may import only itself, bootlab.session, bootlab.control, "
    "bootlab.transports, bootlab.core, bootlab.exitcodes)",
    "bootlab/control/farm.py:3: bootlab.control.farm imports labgrid.remote.client (labgrid "
    "is used in bootlab.transports.place_keeper only)",
    "bootlab/core/capture/leak.py:3: bootlab.core.capture.leak imports "
    "bootlab.core.analysis.pipeline (core package capture may import only: files)",
    "bootlab/core/capture/leak.py:4: bootlab.core.capture.leak imports textual (bootlab.core "
    "never imports textual)",
    "bootlab/core/capture/leak.py:8: bootlab.core.capture.leak imports bootlab.ui.app "
    "(bootlab.core may import only itself)",
    "bootlab/session/popup.py:3: bootlab.session.popup imports textual.screen (bootlab.session "
    "never imports textual)",
    "bootlab/session/popup.py:5: bootlab.session.popup imports bootlab.ui.screens.dialogs "
    "(bootlab.session may import only itself, bootlab.control, bootlab.transports, "
    "bootlab.core, bootlab.exitcodes)",
    "bootlab/ui/widgets/port_pane.py: bootlab.ui.widgets.port_pane reaches "
    "bootlab.transports.device, bootlab.transports.errors, bootlab.transports.execport, "
    "bootlab.transports.line, bootlab.transports.lock, bootlab.transports.place, "
    "bootlab.transports.place_keeper, bootlab.transports.port, bootlab.transports.reader "
    "(widgets never reach the transports, not even through another module)",
    "bootlab/ui/widgets/port_pane.py:3: bootlab.ui.widgets.port_pane imports "
    "bootlab.session.live (bootlab.ui.widgets may import only itself, bootlab.core, "
    "bootlab.ui.contrast, bootlab.ui.keys, bootlab.session.phase_marks)",
]
"""What the check says of them: each file, line and import, and the rule it breaks."""


def test_forbidden_imports_are_reported_with_file_line_and_rule(tmp_path: Path) -> None:
    copy = tmp_path / "bootlab"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for name, text in PLANTED.items():
        (copy / name).write_text(text)
    found = violations(copy)
    print("\n".join(found))
    assert sorted(found) == CAUGHT


def loaded_after_import(module: str) -> list[str]:
    code = (f"import sys, {module}; "
            "print(' '.join(m for m in ('textual', 'serial', 'asyncio', 'rich') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


def test_core_has_modules() -> None:
    assert "bootlab.core.analysis.pipeline" in CORE and len(CORE) >= 40


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_ui_or_io_library(module: str) -> None:
    assert loaded_after_import(module) == []


@pytest.mark.parametrize("module", SESSION)
def test_a_session_module_loads_no_textual(module: str) -> None:
    """The runtime both front ends drive runs headless: no Textual, no Rich."""
    loaded = loaded_after_import(module)
    assert "textual" not in loaded and "rich" not in loaded


@pytest.mark.parametrize("module", WIDGETS)
def test_a_widget_loads_no_serial(module: str) -> None:
    assert "serial" not in loaded_after_import(module)


def test_cli_entry_imports_no_textual() -> None:
    assert "textual" not in loaded_after_import("bootlab.cli")


def test_labgrid_and_asyncio_load_only_when_a_place_is_opened() -> None:
    """`bootlab record` on a local port loads neither labgrid nor asyncio (its memory)."""
    code = ("import sys, bootlab.cli, bootlab.commands.bench, bootlab.commands.record, "
            "bootlab.transports.place; print(sorted({m.split('.')[0] for m in sys.modules} "
            "& {'labgrid', 'grpc', 'asyncio'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_analyze_command_loads_no_serial_or_textual() -> None:
    loaded = loaded_after_import("bootlab.commands.reading")
    assert "serial" not in loaded and "textual" not in loaded


HEAVY_FOR_RECORD = ("bootlab.commands.report", "bootlab.commands.advise",
                    "bootlab.commands.settings", "bootlab.commands.tune", "bootlab.control",
                    "bootlab.core.board", "bootlab.core.render.report", "xml")
"""What other commands run on; `record` loaded them all with the parser (~9 MB)."""


def test_record_loads_no_other_commands_code(tmp_path: Path) -> None:
    """A real `bootlab record` on a pty (ending at its timeout) builds the whole parser yet
    loads none of the analysis, board control and rendering the other commands run on."""
    board, port = os.openpty()
    try:
        code = ("import atexit, sys; atexit.register(lambda: print(sorted(sys.modules))); "
                "import bootlab.cli; sys.exit(bootlab.cli.main(sys.argv[1:]))")
        out = subprocess.run([sys.executable, "-c", code, "record", os.ttyname(port), "-q",
                              "--timeout", "0.3", "--sessions", str(tmp_path)],
                             capture_output=True, text=True, timeout=60)
    finally:
        os.close(board)
        os.close(port)
    loaded = out.stdout.strip().splitlines()[-1]
    assert "'bootlab.commands.record'" in loaded and "'bootlab.core.capture.session'" in loaded
    assert [name for name in HEAVY_FOR_RECORD if f"'{name}'" in loaded or f"'{name}." in loaded] \
        == []
