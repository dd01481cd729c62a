"""The command floor: one module (or package) per command, each with a `main(argv)`; see
the package's description (apiary_tools/__init__.py)."""
