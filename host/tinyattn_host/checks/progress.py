"""A progress line for a terminal that never ends up inside the output it sits below.

    progress = Progress()            # on stderr, and only when stderr is a terminal
    progress.show(3, 10, "random")   # [######..............] random 3/10
    progress.clear()                 # before printing anything else; nothing left behind
    progress.note("now B=16 S=64")   # free text: in place on a terminal, else a log line
    progress.log("measured in 42 s") # a line that stays
"""

import sys

WIDTH = 20
CLEAR = "\r\x1b[K"  # to the line's start, erase to its end


class Progress:
    """One line redrawn in place on `stream`; silent when it is not a terminal."""

    def __init__(self, stream=None):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = self.stream.isatty()
        self.shown = False

    def show(self, done, total, label):
        if not self.enabled:
            return
        filled = WIDTH * done // total
        self.stream.write("%s[%s%s] %s %d/%d" % (CLEAR, "#" * filled, "." * (WIDTH - filled),
                                                 label, done, total))
        self.stream.flush()
        self.shown = True

    def clear(self):
        if self.shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.shown = False

    def note(self, text):
        """Free text in place of the bar on a terminal; a plain line otherwise (a log)."""
        if self.enabled:
            self.stream.write(CLEAR + text)
            self.shown = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def log(self, text):
        """A line that stays: the progress line is cleared first."""
        self.clear()
        self.stream.write(text + "\n")
        self.stream.flush()
