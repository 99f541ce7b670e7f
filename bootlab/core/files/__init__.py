"""Files: where bootlab keeps things (sessions, profiles, the config folder, the bundled
examples: `config`), replacing a file atomically (`atomic`), errors that name a file's line
(`errors`), and the app's own files: its config.toml (`appconfig`) and what it remembers
between runs (`state`). Within the core it may import: nothing.
"""
