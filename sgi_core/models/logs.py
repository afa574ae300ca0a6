"""Quieting third-party loggers while a model loads or exports."""

from __future__ import annotations

import contextlib
import logging


@contextlib.contextmanager
def logger_at_error(name: str | None = None):
    """Let only errors through the logger ``name`` (the root logger for None) inside the block; its level after."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
