"""The pictures the docs show are the editor as it is: each was taken by an end-to-end test
(`docScreenshot`) and copied by `make screenshots`, which records the hash of the UI sources
they show (docs/images/screenshots.json). When those sources change, this fails until the
pictures are made again."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from support.project_docs import ROOT, all_pages, base_of, is_relative, links

IMAGES = ROOT / "docs" / "images"
RECORD = IMAGES / "screenshots.json"
SCRIPT = ROOT / "scripts" / "update-doc-images.mjs"
UI_FOLDERS = ("extension/src", "extension/walkthrough")
REMAKE = "run `make screenshots` and commit docs/images"


def ui_sources_hash(root: Path = ROOT) -> str:
    """What scripts/update-doc-images.mjs computes: sha256 over each UI file (its path, NUL,
    its bytes, NUL; paths sorted), then package.json's "contributes" as canonical JSON."""
    digest = hashlib.sha256()
    files = sorted(
        p.relative_to(root).as_posix()
        for folder in UI_FOLDERS
        for p in (root / folder).rglob("*")
        if p.is_file() and not p.is_symlink()
    )
    for rel in files:
        digest.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    contributes = json.dumps(
        manifest.get("contributes"), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    digest.update(b"package.json#contributes\0" + contributes.encode())
    return digest.hexdigest()


def record() -> dict[str, Any]:
    assert RECORD.exists(), f"{RECORD.relative_to(ROOT)} is missing: {REMAKE}"
    data: dict[str, Any] = json.loads(RECORD.read_text(encoding="utf-8"))
    return data


def shown_images() -> list[tuple[str, Path]]:
    """(where, file) for every picture a page shows that is a file of the repository."""
    out = []
    for page in all_pages():
        for link in links(page):
            if link.image and is_relative(link.target):
                where = f"{page.relative_to(ROOT)}:{link.line}: {link.target}"
                out.append((where, (base_of(page) / link.target).resolve()))
    # The walkthrough's pictures, which the VSIX carries.
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    for walkthrough in manifest["contributes"].get("walkthroughs", []):
        for step in walkthrough["steps"]:
            image = step.get("media", {}).get("image")
            if isinstance(image, str):
                where = f"package.json: walkthrough step {step['id']}: {image}"
                out.append((where, (ROOT / image).resolve()))
    return out


def test_docs_images_show_the_editor_as_its_sources_are_now() -> None:
    recorded = record()["ui_sources_sha256"]
    assert recorded == ui_sources_hash(), (
        "the editor's UI changed since docs/images was made (extension/src, "
        f"extension/walkthrough or package.json's contributes): {REMAKE}"
    )


def test_the_script_and_this_test_hash_the_same_sources() -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH (make test installs the npm packages with it)"
    done = subprocess.run(
        [node, str(SCRIPT), "--hash"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ui_sources_hash()


def test_the_hash_follows_a_change_to_any_ui_source(tmp_path: Path) -> None:
    for rel in ("extension/src/a.ts", "extension/walkthrough/w.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    (tmp_path / "package.json").write_text('{"contributes": {"commands": []}}', encoding="utf-8")
    first = ui_sources_hash(tmp_path)
    (tmp_path / "extension/walkthrough/w.md").write_text("y", encoding="utf-8")
    second = ui_sources_hash(tmp_path)
    (tmp_path / "package.json").write_text(
        '{"contributes": {"commands": [1]}, "version": "2"}', encoding="utf-8"
    )
    third = ui_sources_hash(tmp_path)
    (tmp_path / "package.json").write_text(
        '{"version": "3", "contributes": {"commands": [1]}}', encoding="utf-8"
    )
    assert len({first, second, third}) == 3
    assert ui_sources_hash(tmp_path) == third  # the rest of the manifest is not the UI


def test_every_picture_the_docs_show_was_made_by_make_screenshots() -> None:
    shown = shown_images()
    assert shown, "no page shows a picture: is the parser reading them?"
    listed = record()["images"]
    problems = []
    for where, file in shown:
        if not file.exists():
            problems.append(f"{where}: no such file")
        elif file.parent != IMAGES or file.name not in listed:
            problems.append(f"{where}: not a picture make screenshots made (docs/images/*.png)")
    assert problems == [], "\n".join(problems) + f"\n{REMAKE}"


def test_docs_images_holds_exactly_the_recorded_pictures() -> None:
    listed: dict[str, dict[str, Any]] = record()["images"]
    on_disk = {p.name for p in IMAGES.glob("*.png")}
    assert on_disk == set(listed), f"docs/images differs from screenshots.json: {REMAKE}"
    changed = [
        name
        for name, info in listed.items()
        if hashlib.sha256((IMAGES / name).read_bytes()).hexdigest() != info["sha256"]
    ]
    assert changed == [], f"pictures replaced by hand since make screenshots: {changed}"
