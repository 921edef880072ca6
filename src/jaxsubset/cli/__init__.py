"""The ``jaxsubset`` command: ``demo`` (the motivating example) and ``stats`` (files -> table).

Run it as ``jaxsubset ...`` (the console script) or ``python -m jaxsubset ...``; in a process
of your own, ``jaxsubset.cli.main(["stats", "data.csv", "--chunks", "10"])`` returns the exit
status. It is built on the public ``jaxsubset`` API only.

Bad input never shows a traceback: every problem is one line on stderr and exit status 2, and no
output file is left behind (outputs go to a temporary file renamed into place at the very end,
removed on any error, Ctrl-C, SIGTERM or SIGHUP). Anything else is a bug: exit status 1 and one
line asking for a report (``--debug`` adds the traceback).
"""

from ._main import main as main


__all__ = ["main"]
