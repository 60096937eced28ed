import threading

from netnoise import scheduler_timers


def test_pending_timers_are_cancelled_without_firing():
    fired = threading.Event()
    timers = [threading.Timer(600, fired.set) for _ in range(3)]
    for timer in timers:
        timer.start()
    assert scheduler_timers.cancel_pending() >= 3
    for timer in timers:
        timer.join(timeout=5)
        assert not timer.is_alive()
    assert not fired.is_set()


def test_nothing_pending_is_nothing_to_cancel():
    assert scheduler_timers.cancel_pending() == 0
