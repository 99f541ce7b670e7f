"""The formats a report is written in, named apart from their renderers (`report`) so the
command line can offer them without importing those."""

FORMATS = ("markdown", "html", "csv", "json")
