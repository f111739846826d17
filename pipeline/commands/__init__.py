"""Thin command-line entry points: argument parsing plus one call each; nothing imports them."""
