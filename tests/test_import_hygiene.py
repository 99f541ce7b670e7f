"""The core is UI-free: importing it (or the headless CLI) loads no textual, serial or asyncio."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import bootlab.core

CORE = sorted(f"bootlab.core.{m.name}" for m in pkgutil.iter_modules(bootlab.core.__path__))


def loaded_after_import(module: str) -> list[str]:
    code = (f"import sys, {module}; "
            "print(' '.join(m for m in ('textual', 'serial', 'asyncio', 'rich') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


def test_core_has_modules() -> None:
    assert "bootlab.core.analysis" in CORE and len(CORE) >= 10


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_ui_or_io_library(module: str) -> None:
    assert loaded_after_import(module) == []


def test_cli_entry_imports_no_textual() -> None:
    assert "textual" not in loaded_after_import("bootlab.cli")


def test_analyze_command_loads_no_serial_or_textual() -> None:
    code = ("import sys, bootlab.commands.inspect; "
            "print(' '.join(m for m in ('textual', 'serial') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == []
