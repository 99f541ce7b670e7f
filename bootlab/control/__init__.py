"""Board control: talking to the bootloader and the kernel over a recorded console. It may
import the transports and the core, never the commands or the app."""
