"""The virtual board: the MicroPython unix port on a pseudo-terminal, with a folder as flash."""
