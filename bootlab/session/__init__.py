"""The session runtime: what runs while a board is watched, with no UI library.

Both front ends drive it: the app (`bootlab.ui`) wraps its events in Textual messages, and
`bootlab record` and the board commands use its port loop. Where its parts live:

- `portloop`: the one loop that takes port events (bytes, idle ticks, gaps, reconnections)
  into a recording; `portlink`: a board-control link on a port, recorded through that loop.
- `live`: the live link the app reads a port through (a labgrid place held, typed keys and
  BREAK recorded, board jobs run on the port's thread); `board_jobs`: those jobs (reboot,
  apply and boot, A/B run, tune).
- `replay`: the replay player (speed, pause, seek, checkpoints).
- `batcher`: the `Source` a front end reads and the batcher that posts its lines at most
  thirty times a second; `events`: what a session posts, as plain dataclasses.
- `boot_state`: the boot being watched (milestones, baseline, budgets, the user's marks, its
  collected dmesg); `phase_marks`: what the phase pane marks on each row; `collected`: a
  boot's dmesg read after its goal, joined as the analysis joins it.
"""
