"""The storage layer: the only code that opens `.metis/` files or the user's private cache.

Everything above it goes through `MemoryStore` (the memory files), `cache` (private
per-user state) or `atomic.write_confined` (another agent's configuration, for `init`);
the import contracts in pyproject.toml keep the rest of this package private.
"""
