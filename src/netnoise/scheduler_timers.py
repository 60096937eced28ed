"""The Snakemake scheduler's re-evaluation timers, and why the profiles slow them.

With a job rate limit (Snakemake's ``--max-jobs-per-timespan``, on by default at
100 jobs a second) every pass of the scheduler's loop starts a
``threading.Timer`` that wakes the loop again after the timespan, and a
finished job wakes it too, so each finished job adds one more chain of timers
that never ends: after a study's jobs the scheduler spins, and the core it
takes is load every measurement then counts as its own. The profiles set a
timespan of 30 s (``max-jobs-per-timespan: 1000/30s`` in ``profiles/``).

The timers are not daemon threads: at exit the interpreter waits for the last
of them, up to a timespan. :func:`cancel_pending` (the workflow's
``onsuccess``/``onerror``) cancels them once the scheduler is done.
"""

from __future__ import annotations

import threading


def cancel_pending() -> int:
    """Cancel every timer of this process that has not fired; how many there were."""
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    for timer in timers:
        timer.cancel()
    return len(timers)
