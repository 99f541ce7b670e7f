"""The panes of the main screen: console, phases, settings, status line. They import the core
and the app's plain data (`keys`, `phase_marks`) only, and reach no transport."""
