"""A power switch for the fake board: writes the argv it was given, then powers the board on.

Run by bootlab as `--power-cmd "python power.py TRIGGER ARG..."`: the test checks that every
argument arrives as written (no shell expanded it) and the board then boots.
"""

import json
import sys
from pathlib import Path

trigger = Path(sys.argv[1])
trigger.write_text(json.dumps(sys.argv[2:]))
