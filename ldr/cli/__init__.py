"""The command line ``ldr`` (:func:`ldr.cli.commands.main`): its options, its memory and
time budgets and its progress lines."""

from ldr.cli.commands import main

__all__ = ["main"]
