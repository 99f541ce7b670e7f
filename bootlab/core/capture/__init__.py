"""Capture: console bytes to lines and session files, and any boot log read back. Making device
text safe to show (`text`), printk and bootloader stamps (`stamps`), framing with each line's
first-byte time (`lines`), line times and file line numbers (`linetime`), the session file
(`session`), sessions, grabserial, plain and dmesg logs as one `Source` (`sources`), secrets
typed at a prompt (`redaction`) and lossless exports (`exporters`). It knows no milestone.
Within the core it may import: `files`.
"""
