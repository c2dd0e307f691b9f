"""Attack on the import's bounds (issue 43): a memory folder of 2,500 notes (Codex's ad hoc
notes, one a file). A folder is listed up to 2,000 entries, in the file system's order, so
which 200 were read was that order's, while the message said "the first 200 (by name) were
read". It now says that the folder was listed only in part, so the person knows the notes
read are not the first by name."""

from __future__ import annotations

from support.host_memory import Machine


def test_a_folder_listed_in_part_says_so(machine: Machine) -> None:
    notes = machine.home / ".codex" / "memories" / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True)
    for i in range(2_500):
        (notes / f"n{i:04}.md").write_text(f"- Note {i}\n")

    run = machine.run("import", "--from", "codex", "--dry-run")

    assert run.returncode == 0, run.stderr
    assert run.stdout.count("\n+- Note ") == 200
    assert (
        "Not read: ~/.codex/memories/extensions/ad_hoc/notes: it holds more than 2,000 "
        "entries: 2,000 of them, in the order the file system lists them, were looked at."
    ) in run.stdout
    assert (
        "Not read: ~/.codex/memories/extensions/ad_hoc/notes: it holds more than 200 files: "
        "the first 200 (by name) of those looked at were read."
    ) in run.stdout
