"""Recording: live capture into one session file per boot (`recorder`): each read is written
first, then framed and matched by the analysis pipeline, whose milestones start the next file
and say when a boot is done (the stop rules). Used by `bootlab record`, the board commands and
the app. Within the core it may import: `analysis`, `capture`, `files`.
"""
