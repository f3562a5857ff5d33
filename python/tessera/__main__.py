"""``python -m tessera``: the tessera command (see tessera.cli)."""

from .cli import entry_point

if __name__ == "__main__":
    entry_point()
