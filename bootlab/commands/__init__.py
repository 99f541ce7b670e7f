"""The command implementations behind `bootlab.cli`."""
