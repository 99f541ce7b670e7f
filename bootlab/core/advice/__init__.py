"""Advice: what to change next. The rules that read one known cost each from a boot's log
(`rules`), the recommendation they make and its ranking (`recommendation`), the console UART
model that costs console output (`uart`), and predictions checked against A/B runs
(`predictions`). Within the core it may import: `board`, `analysis`, `capture`, `files`.
"""
