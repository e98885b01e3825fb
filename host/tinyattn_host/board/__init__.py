"""Reach a board: ports, the Board (check, deploy, link), flashing, the REPL, mip manifests."""
