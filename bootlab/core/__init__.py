"""The UI-free core: everything bootlab knows about boots, with no terminal, port or event loop.

Seven packages, each importing only those below it (its docstring says which; the
import-hygiene test checks it): `files` (where bootlab keeps things, atomic writes, file:line
errors) under `capture` (bytes to lines and session files) under `analysis` (milestones,
phases, clocks, statistics); above analysis `recording` (live capture into session files),
`board` (U-Boot and kernel settings as data) and `render` (tables, charts, reports); `advice`
(recommendations) uses board too. Nothing here imports textual, serial, asyncio or rich, nor
the transports, control, commands, ui or cli (tests/test_import_hygiene.py).
"""
