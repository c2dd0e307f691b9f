"""Read-only facts about a workspace outside `.metis/`: which paths exist, which files
declare targets (`.gitignore`, globs), and which memory entries name something gone."""
