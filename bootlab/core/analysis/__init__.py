"""Analysis: from lines to milestones, phases and figures. Marker profiles (`profiles`: the
model, parsing and loading; what a marker's patterns make of a line, `marker_match`; the
built-in files, `profile_files`; patterns checked by `regex_parse`, the one module using the
`re` module's internals), the fast reject (`prefilter`), the tracker (`phases`), the one
pipeline live and on files (`pipeline`), the loader every command and the app read boots with
(`loading`), goals, `--explain`, the user's own milestones, a boot read once (`bootlog`), the
two clocks on one timeline (`clocks`), a boot's dmesg collected after its goal joined on that
clock (`collected`), initcalls, statistics, runs until decided
(`sequential`), comparisons, budgets and the sessions folder at a glance (`catalog`).
Within the core it may import: `capture`, `files`.
"""
