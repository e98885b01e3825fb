"""What `make run` does with the board's answers about its heap: the pieces a request ran in
(a reply's `at_once`), said once; NO_MEMORY met by a fresh heap (the link restarted) before a
model, or by fewer rows a request. No model of the board's heap: the board sizes its work
(device/tinyattn/link/chunks.py, docs/protocol.md "Work in pieces")."""

from .. import protocol
from ..board.board import DeviceReset


class HeapReplies:
    """Check's requests that survive a reset or a full heap; needs self.board, self.summary
    and self.out."""

    def retry(self, ask, reload=None, fresh=True):
        """ask(link), a request that survives one device reset: reconnect, reload, ask again;
        and, when `fresh`, one NO_MEMORY (not even one sample fits what the heap has left, or
        the request itself): the same on a fresh heap (fresh_heap)."""
        try:
            return ask(self.board.link)
        except (DeviceReset, protocol.LinkTimeout) as err:
            self.summary.resets += 1
            self.out("the device reset (%s): reconnecting" % err)
            self.board.start_link()
        except protocol.ErrorReply as err:
            if err.code != protocol.wire.NO_MEMORY or not fresh:
                raise
            self.fresh_heap(err)
        if reload:
            reload()
        return ask(self.board.link)

    def batches(self, name, rows, size, ask, reload=None):
        """(start, stop, reply) of ask(link, start, stop) over `rows` rows in batches of
        `size`, each surviving a reset (retry); a batch the board cannot take (NO_MEMORY:
        its message, or one sample, does not fit beside the model) goes again as half as
        many rows, said once and kept like a cut (a fresh heap would not help: the model's
        load made it)."""
        start = 0
        while start < rows:
            stop = min(start + size, rows)
            try:
                reply = self.retry(lambda link: ask(link, start, stop), reload, fresh=False)
            except protocol.ErrorReply as err:
                if err.code != protocol.wire.NO_MEMORY or size == 1:
                    raise
                size = (size + 1) // 2
                note = "%s: %d row(s) a request: %s" % (name, size, err.message)
                if not any(n.startswith("%s: " % name) and " row(s) a request" in n
                           for n in self.summary.reduced):
                    self.out("heap: " + note)
                    self.summary.reduced.append(note)
                continue
            yield start, stop, reply
            start = stop

    def load(self, name, load):
        """load() (a LOAD_MODEL of the model `name`); when the board has no room left for
        it (NO_MEMORY), load() again on a fresh heap (fresh_heap)."""
        try:
            return load()
        except protocol.ErrorReply as err:
            if err.code != protocol.wire.NO_MEMORY:
                raise
            self.fresh_heap(err, name)
        return load()

    def fresh_heap(self, err, name=None):
        """The link restarted (a soft reset), which frees what the earlier models left behind
        (their modules' code among it): said and kept in the summary."""
        self.board.stop_link()
        self.board.start_link()
        note = ("%sthe link restarted on a fresh heap (%d bytes free now): %s"
                % ("%s: " % name if name else "", self.board.link.info["free"], err.message))
        self.summary.reduced.append(note)
        self.out("heap: " + note)

    def said(self, name, work, head, rows):
        """Note, once a model and work, that the board ran a request of `rows` samples in
        pieces that fit its heap (the reply's `at_once`, docs/protocol.md)."""
        at_once = head.get("at_once")
        if at_once is None or any(n.startswith("%s %s:" % (name, work))
                                  for n in self.summary.reduced):
            return
        note = ("%s %s: the board ran %d sample(s) at a time of a request's %d (its heap)"
                % (name, work, at_once, rows))
        self.summary.reduced.append(note)
        self.out("heap: " + note)
