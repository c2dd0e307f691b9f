"""The one place the version lives: pyproject.toml reads it (setuptools `dynamic`), and
`metis-memory --version` prints it without importing package metadata."""

__version__ = "0.1.0"
