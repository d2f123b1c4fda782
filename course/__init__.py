"""Hopper at the metal: the course package the lesson pages import."""
