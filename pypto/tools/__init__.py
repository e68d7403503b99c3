"""Tools for looking at what the compiler and runtime produced (the `pypto` command). Nothing in
the library imports this package."""
