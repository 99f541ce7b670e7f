"""The main screen, in one place: `screen` (the layout, what the session reports, the clock),
`console_keys` (search, wrap, hex, time column, echo, BREAK), `board_actions` (the board keys and
what board jobs report), `replay_controls` (seeking a replay)."""
