"""Helpers shared by the tests: paths, ptys, fake boards, Pilot helpers, built sessions, fault
injection, a terminal emulator and fuzzing strategies. Fixtures stay in the conftest.py files;
test modules import helpers from here (`from support.pty_pair import Pty`), never from
conftest.py or from each other."""
