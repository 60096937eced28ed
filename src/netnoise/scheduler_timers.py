"""The Snakemake scheduler's re-evaluation timers, and why the profiles slow them.

With a job rate limit (Snakemake's ``--max-jobs-per-timespan``, on by default at
100 jobs a second) every pass of the scheduler's loop starts a
``threading.Timer`` that wakes the loop again after the timespan, and a
finished job wakes it too, so each finished job adds one more chain of timers
that never ends. After the ~170 jobs of a study the scheduler passes its loop
(job selection included) ~170 times a second: its process held 40-80 % of a
core during the last measurements of a 57-minute run on the 2-core testbed,
load that every measurement then counted as its own. A workflow of 120 short
jobs, then one that sleeps 20 s beside 10 waiting for the same resource: 70 %
of a core during the sleep with the default, 0 with a timespan of 30 s
(``max-jobs-per-timespan: 1000/30s`` in ``profiles/``).

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
