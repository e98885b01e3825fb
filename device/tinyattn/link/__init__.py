"""The serial link's device end: `import tinyattn.link; tinyattn.link.serve()` (link/server.py).

wire.py is the table of constants the host reads too; store and the int8 path import it, so
this file imports nothing."""


def serve(*args, **kwargs):
    """Serve the link until EXIT or the timeout (link/server.py's serve)."""
    from .server import serve

    return serve(*args, **kwargs)
