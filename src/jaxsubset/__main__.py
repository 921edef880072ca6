"""``python -m jaxsubset``: the ``jaxsubset`` command (also the console script's entry point)."""

import os
import sys


def run() -> None:
    """Run the command on ``sys.argv`` and leave the process with its exit status.

    The process ends with ``os._exit`` once stdout and stderr are flushed: every output is
    complete and renamed into place by then (``jaxsubset.cli.main`` returns only after that),
    and the interpreter's teardown (JAX's backends, its threads, the garbage of a large file)
    would only add time to every run. Under a profiler or a tracer (``python -m cProfile``,
    coverage) the process exits normally, so that they can write their results.
    """
    from .cli import main

    status = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing more to say
            pass
    if sys.getprofile() is None and sys.gettrace() is None:
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":
    run()
