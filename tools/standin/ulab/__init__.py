"""Stand-in for ulab on interpreters without it: only ulab.numpy (see numpy.py)."""
__version__ = "stand-in"
