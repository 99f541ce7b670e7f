"""UI-free core: framing, timestamps, milestones, phases, sessions, statistics.

Nothing under this package may import textual, serial or asyncio (see tests/test_import_hygiene.py).
"""
