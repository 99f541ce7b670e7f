"""Board control: talking to the bootloader and the kernel over a recorded console. It may
import the transports and the core, never the session runtime, the commands or the app.

- The console and the engine: `board_console` (paced input, pattern waits; its link records
  each read), `engine` (a bench: reset, interrupt autoboot, boot, log in), `uboot` (the U-Boot
  prompt), `linux` (a shell on the board).
- Applying settings: `planning` (a variant's plan, learning the command line and its source
  first), `routes` (how a plan reaches the board), `promptedit` (boot files edited at the
  U-Boot prompt), `linuxedit` (edited from Linux).
- A/B runs: `abrun` (the loop), `abvariants` (each variant's commands and claims), `abverify`
  (each boot checked against them), `abpower` (the power table), `abspread` (several boards).
- Tune: `tuneloop` (A/B steps until a budget is met).
"""
