"""Renderers: terminal (rich), JSON, explain."""
