"""The one place the version lives: pyproject.toml reads it (setuptools `dynamic`), and
`metis-memory --version` prints it without importing package metadata."""

__version__ = "0.1.0"

DISTRIBUTION = "metis-agent-memory"
"""What `pipx install` takes (pyproject.toml's name; tests/packaging/test_install_lines.py
keeps the two equal). The command stays `metis-memory`, the import package `metis_memory`."""
