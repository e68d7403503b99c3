"""Small utilities used by several layers (native builds and their cache, atomic files)."""
