"""A cloned repository built to freeze whatever reads it (issue 24): each file is one that
once stopped the hook, the language server or `check`. The tests and `make bench` share it."""

from __future__ import annotations

from pathlib import Path

HOSTILE_APPLY_TO = "".join("{a,b}" for _ in range(17))
"""Seventeen brace groups: 131,072 alternatives (the server answered nothing for 30 s)."""

MEMORY = (
    "# Workspace memory\n"
    "- Build with `make build`; lint with `tox -e lint`; `make itest` needs Postgres.\n"
    + "".join(f"- Module {i} lives in `src/mod{i}/main.go`.\n" for i in range(10))
)
"""About 500 bytes naming ten paths (none exists) and three targets."""


def gitignore() -> str:
    """40,000 patterns (the hook took 25 s on these and ten references)."""
    return "".join(f"part-{i:05}-*.tmp\n" for i in range(40_000))


def tox_ini() -> str:
    """About 500 KB of `env_list` brace product (500 MiB resident, or MemoryError)."""
    groups = "".join("{" + ",".join(f"f{g}x{i}" for i in range(3_100)) + "}-" for g in range(20))
    return f"[tox]\nenv_list = lint, {groups}end\n\n[testenv:lint]\ncommands = ruff check\n"


def makefile() -> str:
    """About 200 KB of lines that are long runs of spaces (1.7 s per parse, quadratic)."""
    return "build:\n\tgo build ./...\n" + ("x" + " " * 3_990 + "y\n") * 50


def instructions() -> str:
    return f"---\napplyTo: '{HOSTILE_APPLY_TO}'\n---\nUse tabs.\n"


def budgets_toml() -> str:
    """A budget whose glob is many stars (the server never answered again after a didOpen)."""
    return (
        "[[budget]]\n"
        'name = "stars"\n'
        f'files = ["{"*" * 60}x.md", "{"a*" * 40}b.md"]\n'
        'unit = "lines"\nlimit = 10\npast = "warned"\n'
    )


def build(root: Path, *, budgets: bool = True) -> Path:
    """Write the hostile repository into `root` (which must exist) and return it."""
    (root / ".gitignore").write_text(gitignore())
    (root / "tox.ini").write_text(tox_ini())
    (root / "Makefile").write_text(makefile())
    instructions_dir = root / ".github" / "instructions"
    instructions_dir.mkdir(parents=True, exist_ok=True)
    (instructions_dir / "hostile.instructions.md").write_text(instructions())
    (root / ".metis").mkdir(exist_ok=True)
    (root / ".metis" / "MEMORY.md").write_text(MEMORY)
    if budgets:
        (root / ".metis" / "budgets.toml").write_text(budgets_toml())
    return root
