"""bootlab: a bench console for cutting embedded Linux boot time.

The layers, each importing only those below it: `cli` and `commands` (the command line) and
`ui` (the Textual app) over `session` (the runtime both drive, headless) over `control` (driving
a board) over `transports` (ports) and `core` (everything UI-free). A feature spans them; where
its parts live:

- Recording: `transports.reader` (stamped reads), `session.portloop` (the one loop into a
  recording), `core.recording.recorder` (session files), `core.capture.session` (the format),
  `commands.record`, `session.live` (the app's port), `session.replay`.
- Milestones and phases: `core.analysis.profiles` (rules), `pipeline`, `phases`, `loading`,
  `core.render.tables`; the app's `session.boot_state` and `ui.widgets.phase_panel`.
- Settings: `core.board.settings` (the model), `evidence` (their state as a boot shows it),
  `plan` (what a choice types), `argsource` and `argsearch` (where the kernel's arguments come
  from), `control.planning` (a variant's plan), `control.routes` (how it is applied);
  `ui.widgets.settings_panel`.
- A/B runs: plan `core.board.abplan` (its files read back: `abfiles`), run `control.abrun`,
  each variant's commands and claims `control.abvariants`, the power table `control.abpower`,
  several boards `control.abspread`, each boot checked `control.abverify`, statistics
  `core.analysis.sequential`, command `commands.ab`, the app's job `session.board_jobs`,
  screen `ui.screens.ab_result`.
- Tune: `core.board.tuneplan`, `control.tuneloop`, `commands.tune`, `ui.screens.tune_screen`.
- Board farm: `transports.place` and `place_keeper` (labgrid places), `commands.places`.
- Advice and reports: `core.advice`, `core.render.report` (its recommendations section
  `core.render.recommendations`, Markdown and HTML helpers `core.render.markup`),
  `commands.advise`, `commands.report`, `ui.screens.advice`.
"""

__version__ = "0.1.0"
