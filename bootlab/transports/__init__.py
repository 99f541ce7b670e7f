"""Transports: where console bytes come from and how they are stamped.

Serial devices and ptys (held exclusively), pyserial URLs (socket://, rfc2217://), local
commands on a pty (exec:), and the reader thread that stamps every read and rides out a lost
port. Nothing else of bootlab's is imported here.
"""
