"""The window behind ``render_mode="human"``: an env's ``rgb_array`` frames shown with pygame.

gymnasium draws its human mode with pygame, so its users have it or expect it; it is the
optional extra ``sekai-core[human]``, imported only when a window opens. An env that draws
frames opens its ``Window`` in ``__init__`` (so a missing pygame or display is one clear
error at construction, not a failure mid-episode) and shows a frame after ``reset`` and each
``step``, paced to ``metadata["render_fps"]``.

Every window of a process is pygame's one display: two envs in human mode take turns in it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

_INSTALL = "pip install 'sekai-core[human]'"


class Window:
    """A window showing ``(height, width, 3)`` uint8 frames at most ``fps`` times a second.

    Raises ModuleNotFoundError without pygame and RuntimeError without a display.
    """

    def __init__(self, title: str, fps: float) -> None:
        _check_display()
        self._pygame = _import_pygame()
        self._init_display()
        self._pygame.display.set_caption(title)
        self._title = title
        self._clock = self._pygame.time.Clock()
        self._fps = fps
        self.closed = False

    def show(self, frame: np.ndarray) -> None:
        """Put ``frame`` on the screen, then wait out the rest of this frame's 1/fps seconds."""
        if self.closed:
            raise RuntimeError(f"the {self._title} window is closed")
        pygame = self._pygame
        height, width = frame.shape[:2]
        surface = pygame.display.get_surface() if pygame.display.get_init() else None
        if surface is None or surface.get_size() != (width, height):
            self._init_display()  # again if another env's window closed the display
            surface = pygame.display.set_mode((width, height))
            pygame.display.set_caption(self._title)
        pygame.surfarray.blit_array(surface, np.ascontiguousarray(frame.transpose(1, 0, 2)))
        pygame.event.pump()  # keeps the window responsive to the window manager
        pygame.display.flip()
        self._clock.tick(self._fps)

    def close(self) -> None:
        """Close the window; calling it again is harmless."""
        if not self.closed:
            self.closed = True
            self._pygame.display.quit()

    def _init_display(self) -> None:
        pygame = self._pygame
        try:
            pygame.display.init()
        except pygame.error as error:
            raise RuntimeError(
                f'render_mode="human" could not open a display: {error}; use '
                'render_mode="rgb_array" to get the frames as arrays instead'
            ) from error


def _check_display() -> None:
    """RuntimeError on Linux when no display is set and no SDL video driver is chosen."""
    if not sys.platform.startswith("linux"):
        return
    if any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")):
        return
    raise RuntimeError(
        'render_mode="human" needs a display, and neither DISPLAY nor WAYLAND_DISPLAY is set: '
        'use render_mode="rgb_array" to get the frames as arrays, or set '
        "SDL_VIDEODRIVER=dummy to draw into a window that is not shown"
    )


def _import_pygame() -> Any:
    try:
        import pygame
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f'render_mode="human" shows frames with pygame, which is not installed: {_INSTALL}',
            name=error.name,
        ) from error
    return pygame
