"""Python's cyclic garbage collector kept out of the annotator's way: start-up objects frozen once, and no full
collection between a decision key and the next item on screen.

A full collection walks every object the collector tracks. On the annotation screen it took 15-90 ms of CPU with
the ~65,000 objects of the imported modules and the app among them, and when one fell between a decision key and
the next item on screen it made the p95 of the key-to-next-item time (bench/tui.py: a 4x p95 on one run with
100,000-character conversations, with a p50 within 1.1x). Reference counting frees everything without cycles at
once either way; only the collection of reference cycles moves.
"""
from __future__ import annotations

import contextlib
import gc

RESUME_DELAY = 0.05  # seconds after the refresh that shows the next item before the collector is given back
_frozen = False
_paused = False  # whether collect_after_paint has paused the collector and not given it back yet


@contextlib.contextmanager
def paused_while_loading():
    """No cyclic collection inside the block (the modules of an app being imported), and every object alive at its
    end frozen (gc.freeze, as freeze_startup_objects); the collector is given back as it was. Importing the
    annotation screen's modules (Textual, pydantic, sqlite-utils, prefval's own) creates some 50,000 objects that
    stay alive as long as the process, and as their number grew the collector walked them again and again, in a
    full collection among others, finding nothing to free: 20-40 ms of CPU, a tenth of the screen's start-up
    (bench/tui.py). Frozen, they are not walked when the collector runs again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def freeze_startup_objects() -> None:
    """gc.freeze() once per process: every object alive now (modules, classes, the app and its session) leaves
    the collector's generations, so that a full collection no longer walks them (10-30 ms instead of 25-90 ms of
    CPU on the annotation screen). Frozen objects are still freed by reference counting; reference cycles among
    them would stay, and they live as long as the process anyway. Call it before the first screen is built, so
    that the item views, which are replaced as the annotator works, stay collectable. Later calls do nothing (a
    test session running many apps freezes once)."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


@contextlib.contextmanager
def collect_after_paint(widget):
    """Pause the cyclic collector for the block (a decision being committed and the next item drawn) and give it
    back (resume()) RESUME_DELAY seconds after the screen has been refreshed after it, i.e. in the time the
    annotator reads the new item. Resuming in the refresh itself let a pending full collection run in the same
    frame that Textual was still finishing (bench/tui.py: p95 with conversations 1.6-2.1x without on quiet runs);
    50 ms later the frame is done. The timer belongs to the app (a screen's timers die with the screen). Nothing
    changes when the collector is already paused (by this or by someone else). The apps call resume() when they
    close, so that a pause never outlives them."""
    global _paused
    if not gc.isenabled():
        yield
        return
    gc.disable()
    _paused = True
    try:
        yield
    finally:
        if not widget.call_after_refresh(_resume_later, widget):  # the app is closing: give it back now
            resume()


def _resume_later(widget) -> None:
    try:
        widget.app.set_timer(RESUME_DELAY, resume, name="gc-resume")
    except Exception:  # no running app any more (closing): give the collector back now
        resume()


def resume() -> None:
    """Give the collector back if collect_after_paint paused it (else nothing)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
