"""The Textual app: console, phases and settings over a live port or a replayed session.

A thin layer over the session runtime (`bootlab.session`): its workers post events, which
`messages` wraps for Textual, and the screens' handlers own the state. `main/` is the main
screen, `screens/` the others, `widgets/` the panes; `launch` opens the app on a port or a file.
Only `bootlab` with no command (on a terminal) and `bootlab PORT` import it; it may import the
session, board control, the transports, the core and the exit codes, never the commands.
"""
