"""`scripts/generate_secret_rules.py`, loaded once as a module for the tests that check the
rules it makes (it is a script, not a package module)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "generate_secret_rules.py"


@functools.cache
def rules_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_secret_rules", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module
