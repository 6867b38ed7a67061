"""Figures: ukdb."""

__all__: list[str] = []
