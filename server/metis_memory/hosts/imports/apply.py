"""Applying an import's proposal, place by place: each written whole (the store's consolidate)
only if its file is still the one the proposal read (compare-and-swap on `expected_hash`), with
the write guard's secret check on what is written, recorded in the write log as a consolidate
whose detail says "import from claude, gemini". A place over its hard cap, or whose file
changed meanwhile, is not written; the others are. An agent's import (the CLI run from an
agent host's shell) waits for review when review is on, as the agent's tools do."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...store.errors import MemoryConflict, MemoryStoreError
from ...store.memory_store import MemoryStore
from ...store.provenance import Provenance
from ...tools.errors import ToolExecutionError
from ...tools.secret_guard import refuse_new_secrets
from .placement import Target
from .proposal import ImportProposal, TargetProposal

Outcome = Literal["written", "staged", "conflict", "over-cap", "refused", "failed"]


@dataclass(frozen=True)
class Applied:
    target: Target
    path: str
    outcome: Outcome
    message: str
    record_id: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "path": self.path,
            "outcome": self.outcome,
            "message": self.message,
            "record_id": self.record_id,
        }


def detail(proposal: TargetProposal) -> str:
    """What the write log says of the write: "import from claude, gemini"."""
    hosts: list[str] = []
    for added in proposal.added:
        if added.host not in hosts:
            hosts.append(added.host)
    return "import from " + ", ".join(hosts)


def apply(store: MemoryStore, proposal: ImportProposal, by: Provenance) -> list[Applied]:
    """Write every place of `proposal` that adds something and is within its hard cap."""
    return [_apply_one(store, t, by) for t in proposal.targets if t.changed]


def _apply_one(store: MemoryStore, target: TargetProposal, by: Provenance) -> Applied:
    if target.over_by:
        return Applied(
            target.target,
            target.path,
            "over-cap",
            f"{target.path}: nothing written: it would be {target.over_by:,} bytes over its hard "
            f"cap of {target.hard_cap:,}.",
        )
    user = target.target == "user-memory"
    owner = store.user_memory if user else store
    tool = "user_memory_consolidate" if user else "memory_consolidate"
    try:
        refuse_new_secrets(
            tool, "content", target.proposed, target.current, target.file, user_memory=user
        )
    except ToolExecutionError as exc:
        return Applied(target.target, target.path, "refused", exc.message)
    try:
        stage = by.agent and (owner.review_enabled() or (user and store.review_enabled()))
        result = owner.consolidate(
            target.file,
            target.proposed,
            expected_hash=target.expected_hash,
            by=by,
            detail=detail(target),
            stage=stage,
        )
    except MemoryConflict:
        return Applied(
            target.target,
            target.path,
            "conflict",
            f"{target.path} changed after the import read it: nothing was written to it, so "
            "that change is kept. Run metis-memory import again to see the proposal against "
            "it as it is now.",
        )
    except MemoryStoreError as exc:
        return Applied(target.target, target.path, "failed", f"{exc} Nothing was written.")
    count = len(target.added)
    entries = f"{count} entr{'y' if count == 1 else 'ies'}"
    if result.staged is not None:
        return Applied(
            target.target,
            target.path,
            "staged",
            f"{target.path}: {entries} waiting for review (change #{result.staged.id}); "
            "nothing changes until the user accepts it.",
        )
    return Applied(
        target.target,
        target.path,
        "written",
        f"{target.path}: {entries} added ({result.before_size_bytes:,} → "
        f"{result.after_size_bytes:,} bytes, hard cap {target.hard_cap:,}).",
        result.record_id,
    )
