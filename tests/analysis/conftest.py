"""Analysis tests are pure (text in, findings out): no files, no server, no fixtures
beyond pytest's own. Hypothesis strategies live in `strategies.py`; each property
test sets its own settings so nothing here leaks into other test folders."""
