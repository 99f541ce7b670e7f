"""The command implementations behind `bootlab.cli`: one module per family of commands. They
may import board control, the transports, the core and the exit codes, never the app."""
