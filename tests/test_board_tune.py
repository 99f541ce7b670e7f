"""`bootlab tune` on the real QEMU board (genuine U-Boot 2023.01 and Linux 6.1): a short tune
from the factory environment, a planted harmful setting, and `--restore`; and one step through
the 115200-baud UART proxy."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.paths import BOOTLAB

from bootlab.core.board.tuneplan import TuneState
from bootlab.core.capture.session import load_session
from bootlab.exitcodes import NOT_MET

pytestmark = pytest.mark.board


def bootlab(*argv: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=timeout)


@pytest.mark.timeout(1500)  # up to 18 boots of ~10 s and two restores, more on a loaded host
def test_a_short_tune_keeps_bootdelay_0_undoes_a_wrong_rootfstype_and_restores(
        board_url: str, tmp_path: Path) -> None:
    # Two steps: the planted wrong root file system type, then the countdown (tried first
    # too, so the test costs two steps whatever else bootlab would rank next).
    result = bootlab("tune", board_url, "--persist", "--max-boots", "5", "--baseline-boots", "3",
                     "--try", "rootfstype=xfs", "--try", "bootdelay=0", "--max-steps", "2",
                     "--timeout", "60", "--sessions", str(tmp_path))
    assert result.returncode == 0, result.stderr
    state = TuneState.load(tmp_path / "tune-tune.json")
    assert state.finished and state.stopped_why == "the limit of 2 steps is reached"
    wrong, countdown = state.steps
    # rootfs=xfs: the board never reached login (or lost its root mount): undone and reported.
    assert (wrong.setting, wrong.outcome) == ("rootfstype=xfs", "harmful"), wrong.why
    assert "harmful   rootfstype=xfs:" in result.stdout
    # bootdelay=0 (the factory countdown is 2 s): kept, with its interval above zero and the
    # countdown's absence as evidence.
    assert (countdown.setting, countdown.outcome) == ("bootdelay=0", "kept"), countdown.why
    assert countdown.low_ms is not None and countdown.low_ms > 0
    assert countdown.saving_ms is not None and countdown.saving_ms > 1000
    assert any("bootdelay" in line for line in countdown.evidence), countdown.evidence
    assert state.kept == ["bootdelay=0"] and "setenv bootdelay 0" in state.commands
    assert state.env_backup["bootdelay"] == "2" and "rootfstype=ext4" in \
        state.env_backup["bootargs"]
    # --restore: the saved countdown is put back; a second one finds nothing left to do
    # (bootlab's own printenv equals the environment the tune found).
    restored = bootlab("tune", board_url, "--restore", "--sessions", str(tmp_path),
                       timeout=300)
    assert restored.returncode == 0, restored.stderr
    assert "sent: setenv bootdelay 2" in restored.stderr
    assert "the environment is as the tune found it" in restored.stderr
    again = bootlab("tune", board_url, "--restore", "--sessions", str(tmp_path), timeout=300)
    assert again.returncode == 0, again.stderr
    assert "the environment was already as the tune found it" in again.stderr



@pytest.mark.timeout(1800)  # up to 19 boots of ~12 s at 115200 baud, more on a loaded host
def test_at_115200_baud_a_tune_keeps_quiet_and_types_nothing_at_linux(
        board_url_115200: str, tmp_path: Path) -> None:
    """Through the lab's UART proxy each kernel line costs boot time, as on hardware: quiet is
    a real saving to login. Without --persist the last boot leaves the board at Linux's login
    and the final commands read the boot script: at the U-Boot prompt, never at Linux."""
    result = bootlab("tune", board_url_115200, "--try", "quiet", "--max-steps", "1",
                     "--max-boots", "8", "--baseline-boots", "3", "--timeout", "90",
                     "--budget", "1s", "--sessions", str(tmp_path), timeout=1700)
    assert result.returncode == NOT_MET, result.stderr    # no board of these logs in 1 s
    assert re.search(r"the budget is not met: login at \d+\.\d{3} s, budget 1 s",
                     result.stderr), result.stderr
    state = TuneState.load(tmp_path / "tune-tune.json")
    assert state.stopped_why == "the limit of 1 steps is reached"
    (step,) = state.steps
    assert (step.setting, step.outcome) == ("quiet", "kept"), \
        (step.why, step.saving_ms, step.low_ms, step.high_ms, step.boots)
    assert step.low_ms is not None and step.low_ms > 0
    assert any("quiet in force" in line for line in step.evidence), step.evidence
    assert state.kept == ["quiet"]
    assert any(c.startswith("setenv bootargs ") and c.rstrip("'").endswith(" quiet")
               for c in state.commands), state.commands
    assert f"  kept      quiet: {step.saving_ms:.0f} ms [{step.low_ms:.0f}, " in result.stdout
    # Nothing meant for U-Boot reached Linux's login or shell in any session of the run.
    typed = [load_session(path) for path in tmp_path.glob("*.jsonl")]
    assert len(typed) >= 2 * step.boots + len(state.baseline)
    for session in typed:
        text = session.data.decode("latin-1")
        assert not re.search(r"(?:login: |# )(?:load|md\.b|printenv|setenv) ", text), \
            session.path.name
        assert "Login incorrect" not in text, session.path.name
