"""The version of contractlang (also in ``pyproject.toml``; a test checks they agree)."""

from __future__ import annotations

__version__ = "0.1.0"
