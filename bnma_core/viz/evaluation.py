"""Figures: evaluation."""

__all__: list[str] = []
