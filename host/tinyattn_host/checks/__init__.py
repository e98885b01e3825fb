"""Checks against the NumPy reference over the link: make run (Iris, digits), check-model,
the demo; their plots and progress line."""
