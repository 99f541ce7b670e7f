"""Board: the bootloader and kernel settings as data. Typing values at U-Boot's prompt and
reading `printenv` (`hush`), the kernel command line (`cmdline`) and where a board takes it
from (`argsource`; boot files read back through `md.b`: `memdump`), the setting model and its
files (`settings`), what a boot log shows of the board (`facts`), `applies_when` conditions and
applicability, the trimmed kernel read (`kernel_read`), the commands a choice types (`plan`),
each setting's state as a boot shows it (`evidence`, `evidence_rules`), whether an A/B
boot ran as its variant says (`verify`), A/B run plans (`abplan`) and their files read back
(`abfiles`), and tune runs (`tuneplan`).
Within the core it may import: `analysis`, `capture`, `files`.
"""
