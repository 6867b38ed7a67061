"""Figures: mcmc."""

__all__: list[str] = []
