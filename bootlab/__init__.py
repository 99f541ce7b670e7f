"""bootlab: a bench console for cutting embedded Linux boot time."""

__version__ = "0.1.0"
