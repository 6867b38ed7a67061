"""Long runs with live progress and a Stop button.

The work runs in a worker thread that never calls Streamlit; the script thread polls it a few
times a second and redraws (progress bars, figures). A click on Stop (or leaving the page)
makes Streamlit interrupt the script thread at its next Streamlit call; :func:`run_with_stop`
then asks the worker to stop, waits for it to hand back what it has so far, passes that to
``on_finish`` and lets the interruption continue. The next script run finds the partial result
in ``st.session_state``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def run_with_stop(work: Callable[[Callable[[], bool]], Any], *,
                  on_tick: Callable[[], None] | None = None,
                  on_finish: Callable[[Any, bool], None] | None = None,
                  interval: float = 0.25) -> Any:
    """Run ``work(should_stop)`` in a worker thread, ticking in the calling thread.

    Parameters
    ----------
    work : callable
        Receives ``should_stop()`` (True once a stop was requested) and returns a result; it
        must return promptly (with a partial result) once ``should_stop()`` is True.
    on_tick : callable, optional
        Called every ``interval`` seconds in the calling (script) thread while the work runs,
        and once at the end: the place for Streamlit calls (redraws).
    on_finish : callable, optional
        ``on_finish(result, stopped)`` after the work returned, also when the script was
        interrupted (then ``stopped`` is True); store the result in ``st.session_state`` here.
    interval : float
        Seconds between ticks.

    Returns
    -------
    The work's result. Exceptions raised by the work are re-raised here.
    """
    stop = threading.Event()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = work(stop.is_set)
        except BaseException as exc:  # handed to the script thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="bnma-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            if on_tick is not None:
                on_tick()
            worker.join(interval)
    except BaseException:
        # Streamlit interrupted the script (Stop clicked, page left): stop the worker, keep
        # what it has, and let the interruption continue.
        stop.set()
        worker.join()
        if "error" not in box and on_finish is not None:
            on_finish(box.get("result"), True)
        raise
    if "error" in box:
        raise box["error"]
    if on_tick is not None:
        on_tick()
    if on_finish is not None:
        on_finish(box["result"], False)
    return box["result"]
