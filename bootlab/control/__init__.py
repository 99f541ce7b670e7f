"""Board control: talking to the bootloader and the kernel over a recorded console."""
