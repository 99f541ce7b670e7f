"""The Textual app: console, phases and settings over a live port or a replayed session.

A thin layer over the core: source workers post messages, screen handlers own the state.
Only `bootlab` with no command (on a terminal) and `bootlab PORT` import it; it may import board
control, the transports, the core and the exit codes, never the commands.
"""
