"""Watching the disk: the memory files and the paths memory entries refer to."""
