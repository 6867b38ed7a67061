"""Figures: naive."""

__all__: list[str] = []
