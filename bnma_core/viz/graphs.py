"""Figures: graphs."""

__all__: list[str] = []
