"""The panes of the main screen: console, phases, settings, status line."""
