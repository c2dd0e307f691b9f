"""Budgets: what other agents load from a workspace, in which unit, up to which limit, and
what they do past it. The built-in budgets are data (`builtin.json`, each with its source);
users add and switch them off in `.metis/budgets.toml`. Measuring text against a budget is
pure (`budgets/measure.py`); finding which files a budget covers is `paths.py`."""
