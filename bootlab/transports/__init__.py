"""Transports: where bytes come from (serial devices, ptys, sockets) and where they are stamped."""
