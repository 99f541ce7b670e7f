"""The exit codes of every `bootlab` command and of the app, in one place.

0 success; 1 the goal was not met (the `--until` milestone never came, a timeout, a budget
missed); 2 bad usage, unreadable input or a bad profile; 3 the port failed (missing, busy,
permission, unplugged, peer closed); 4 an A/B boot showed a setting against its variant (it
was not in force, or the base ran with it).
"""

OK = 0
NOT_MET = 1
BAD_INPUT = 2
PORT_FAILED = 3
NOT_IN_FORCE = 4
