"""Qt without a screen: the one place that decides when Qt draws offscreen.

The window, the figures the command line writes as PNGs, and the benchmark drivers all need Qt,
and Qt aborts the process (qFatal) when its platform plugin cannot open a display. Where there is
no screen (Linux without DISPLAY or WAYLAND_DISPLAY), they ask Qt for its offscreen platform
through the QT_QPA_PLATFORM variable, before Qt starts, in this process or in the environment of
a child they spawn.

It imports no Qt (the command line and the benchmarks call it before deciding to load Qt), and
it does not diagnose why a window cannot open (missing X11 libraries: see `gui.app`).
"""

from __future__ import annotations

import os
import sys
from typing import Mapping, MutableMapping

PLATFORM_VARIABLE = "QT_QPA_PLATFORM"
OFFSCREEN = "offscreen"


def has_screen(env: Mapping[str, str] | None = None) -> bool:
    """Whether Qt has a screen to open windows on: always outside Linux, else when DISPLAY or
    WAYLAND_DISPLAY is set (in `env`, by default this process's environment).

    >>> has_screen({}) == (not sys.platform.startswith("linux"))
    True
    """
    env = os.environ if env is None else env
    return not sys.platform.startswith("linux") or bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def use_offscreen(env: MutableMapping[str, str] | None = None, *, always: bool = False,
                  replace: bool = False) -> bool:
    """Ask Qt for the offscreen platform in `env` (by default this process's environment, which
    must happen before the QApplication is made) when there is no screen, or `always`.

    A platform already chosen in QT_QPA_PLATFORM is kept unless `replace`. Returns whether `env`
    now asks for offscreen.

    >>> env = {"QT_QPA_PLATFORM": "xcb"}
    >>> use_offscreen(env, always=True), env["QT_QPA_PLATFORM"]
    (False, 'xcb')
    >>> use_offscreen(env, always=True, replace=True), env["QT_QPA_PLATFORM"]
    (True, 'offscreen')
    """
    env = os.environ if env is None else env
    if always or not has_screen(env):
        if replace:
            env[PLATFORM_VARIABLE] = OFFSCREEN
        else:
            env.setdefault(PLATFORM_VARIABLE, OFFSCREEN)
    return env.get(PLATFORM_VARIABLE) == OFFSCREEN
