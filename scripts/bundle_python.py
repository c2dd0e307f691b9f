"""Build the Python side of the VSIX: the server and its dependencies for each supported CPython.

Why: pydantic-core and watchfiles are compiled, so one folder of wheels cannot serve every
interpreter. For each CPython 3.10-3.15 (and free-threaded 3.14t) we `pip install --target`
the platform's binary wheels
(no build, no network at run time); the launcher (extension/python/server.py) puts the folder
matching the running interpreter first on sys.path. Top-level entries that are byte-identical
for several versions are kept once (see `share`). With --cache-dir, each version's installed
dependencies are kept there, keyed on everything that decides them (`install_key`), so a
fresh clone with that cache copies them instead of running pip (make passes the developer
cache every clone shares, scripts/dev-cache.sh; runs take a lock on it).

Usage: python scripts/bundle_python.py OUT_DIR [--target linux-x64] [--constraints FILE]
       [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

try:
    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # pip always carries a copy
    from pip._vendor.packaging.markers import default_environment  # type: ignore[no-redef,unused-ignore]
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[assignment,unused-ignore]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[assignment,unused-ignore]

ROOT = Path(__file__).resolve().parent.parent
PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13", "3.14", "3.15", "3.14t")
"""A `t` suffix is a free-threaded build (its own ABI, `cp314t`: abi3 wheels do not load in
it). 3.15t is left out: watchfiles publishes no cp315t wheel yet (1.3.0, checked 2026-11-23),
so the launcher refuses it by name rather than failing on an import."""

# vsce --target -> pip --platform tags (the wheels pydantic-core and watchfiles publish).
PLATFORMS: dict[str, list[str]] = {
    "linux-x64": ["manylinux2014_x86_64", "manylinux_2_17_x86_64"],
    "linux-arm64": ["manylinux2014_aarch64", "manylinux_2_17_aarch64"],
    "alpine-x64": ["musllinux_1_1_x86_64"],
    "darwin-x64": ["macosx_10_12_x86_64", "macosx_10_13_x86_64", "macosx_10_15_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
    "win32-arm64": ["win_arm64"],
}


# Optional features the VSIX carries beside the default install (which has the MCP server
# the extension offers to VS Code's MCP support): none.
EXTRAS: tuple[str, ...] = ()


def distribution() -> str:
    """The name pyproject.toml publishes the package under (the venv's metadata is filed
    under it)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    with (ROOT / "pyproject.toml").open("rb") as f:
        name: str = tomllib.load(f)["project"]["name"]
    return name


def dependencies(version: str, target: str) -> list[str]:
    """The runtime requirements of the package (read from the project venv's metadata)
    that apply to CPython `version` on `target`."""
    env = target_environment(version, target)
    selected: list[str] = []
    for line in metadata.requires(distribution()) or []:
        req = Requirement(line)
        if req.marker is None or any(
            req.marker.evaluate({**env, "extra": extra}) for extra in ("", *EXTRAS)
        ):
            selected.append(str(req).split(";")[0].strip())
    return selected


def tree_hash(path: Path) -> str:
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path.parent)).encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def install(
    version: str, platforms: list[str], dest: Path, constraints: Path | None, target: str
) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--target",
        str(dest),
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        version.removesuffix("t"),
    ]
    if version.endswith("t"):  # free-threaded: only its own ABI (and pure wheels) will load
        cmd += ["--abi", "cp" + version.replace(".", "")]
    for platform in platforms:
        cmd += ["--platform", platform]
    if constraints is not None:
        cmd += ["--constraint", str(constraints)]
    subprocess.run([*cmd, *dependencies(version, target)], check=True)
    for _ in range(10):  # dependencies behind markers for the target version, to a fixed point
        missing = missing_requirements(dest, version, target)
        if not missing:
            return
        subprocess.run([*cmd, *missing], check=True)
    raise SystemExit(f"bundle: dependencies for CPython {version} did not settle")


# Environment markers for each vsce target (pip evaluates markers against the running Python,
# not --python-version/--platform, so dependencies such as `exceptiongroup; python_version <
# "3.11"` would be missed for other versions: we evaluate them ourselves).
MARKER_PLATFORM: dict[str, dict[str, str]] = {
    "linux-x64": {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
    },
    "linux-arm64": {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "aarch64",
        "os_name": "posix",
    },
    "alpine-x64": {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
    },
    "darwin-x64": {
        "sys_platform": "darwin",
        "platform_system": "Darwin",
        "platform_machine": "x86_64",
        "os_name": "posix",
    },
    "darwin-arm64": {
        "sys_platform": "darwin",
        "platform_system": "Darwin",
        "platform_machine": "arm64",
        "os_name": "posix",
    },
    "win32-x64": {
        "sys_platform": "win32",
        "platform_system": "Windows",
        "platform_machine": "AMD64",
        "os_name": "nt",
    },
    "win32-arm64": {
        "sys_platform": "win32",
        "platform_system": "Windows",
        "platform_machine": "ARM64",
        "os_name": "nt",
    },
}


def target_environment(version: str, target: str) -> dict[str, str]:
    """The marker environment of CPython `version` on a vsce target."""
    return {
        **{key: str(value) for key, value in default_environment().items()},
        **MARKER_PLATFORM[target],
        "python_version": version.removesuffix("t"),
        "python_full_version": f"{version.removesuffix('t')}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
    }


def missing_requirements(dest: Path, version: str, target: str) -> list[str]:
    """Requirements of the installed distributions that apply to the target but are absent."""
    env = target_environment(version, target)
    installed: set[str] = set()
    requires: list[Requirement] = []
    for dist in metadata.distributions(path=[str(dest)]):
        installed.add(canonicalize_name(dist.metadata["Name"]))
        requires += [Requirement(r) for r in dist.requires or []]
    missing: dict[str, str] = {}
    for req in requires:
        if req.marker is not None and not req.marker.evaluate({**env, "extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name not in installed:
            missing[name] = str(req).split(";")[0].strip()
    return sorted(missing.values())


def install_key(version: str, target: str, constraints: Path | None) -> str:
    """What decides one version's installed dependencies: the requirements (pyproject.toml, as
    the venv's metadata has them), the constraints, the platform, the version, this script
    (its install logic), and the pip and Python that run it (pip evaluates markers against
    the running Python). Not the interpreter's path, so every clone shares an entry: it was
    in the bin/ scripts' shebangs and their RECORD lines, which `prune` drops. Releases
    published since are not in it: a new key fetches them."""
    from pip import __version__ as pip_version

    parts = {
        "requirements": dependencies(version, target),
        "constraints": constraints.read_text(encoding="utf-8") if constraints else None,
        "target": target,
        "platforms": PLATFORMS[target],
        "version": version,
        "script": Path(__file__).read_text(encoding="utf-8"),
        "pip": pip_version,
        "python": sys.version,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


KEEP_UNUSED_S = 14 * 24 * 3600
"""A cached entry of another key is removed once unused this long (as scripts/dev-cache.sh)."""


def install_cached(
    version: str, dest: Path, constraints: Path | None, target: str, cache: Path | None
) -> None:
    """`install` and `prune` into dest, or a copy of the cached result of the same key."""
    if cache is None:
        install(version, PLATFORMS[target], dest, constraints, target)
        prune(dest)
        return
    tag = "cp" + version.replace(".", "")
    entry = cache / target / f"{tag}-{install_key(version, target, constraints)}"
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another clone's build may fill or prune it too
        _fill_and_copy(version, entry, dest, constraints, target)


def _fill_and_copy(
    version: str, entry: Path, dest: Path, constraints: Path | None, target: str
) -> None:
    tag = entry.name.split("-")[0]
    if not entry.is_dir():
        # Installed beside the entry, renamed into place once complete: an interrupted run
        # leaves no half entry behind.
        partial = entry.with_name(f"{entry.name}.partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        install(version, PLATFORMS[target], partial, constraints, target)
        prune(partial)
        # Under the lock no other build is filling one: every other partial is dead. Other
        # keys may be another clone's (the cache is shared): removed once unused a while.
        unused = time.time() - KEEP_UNUSED_S
        for old in entry.parent.glob(f"{tag}-*"):
            if old != partial and (".partial-" in old.name or old.stat().st_mtime < unused):
                shutil.rmtree(old, ignore_errors=True)
        partial.rename(entry)
    else:
        print(f"bundle: cached {entry}", file=sys.stderr)
        os.utime(entry)  # in use: see the pruning above
    shutil.copytree(entry, dest)


def prune(dest: Path) -> None:
    """Drop what never runs: bytecode caches, bin/ scripts, type stubs stay (tiny)."""
    for cache in list(dest.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(dest / "bin", ignore_errors=True)
    for record in dest.glob("*.dist-info/RECORD"):  # their lines name files now gone
        lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if not line.startswith(("../../bin/", "bin/"))]
        if kept != lines:
            record.write_text("".join(kept), encoding="utf-8")


def reuse_abi3(per_version: dict[str, Path]) -> None:
    """Where every version resolved the same release of a dist to a stable-ABI (abi3) wheel,
    give them all the oldest version's build: a `cp3X-abi3` wheel runs on every CPython >= 3.X,
    but pip picks the newest tag each version allows (cryptography: cp39-abi3 for 3.10,
    cp311-abi3 for 3.11+), which would keep two copies of the same release."""
    oldest, *others = per_version.values()
    owners: dict[str, int] = {}
    for dist_info in oldest.glob("*.dist-info"):
        for entry in _record_entries(dist_info):
            owners[entry] = owners.get(entry, 0) + 1
    for dist_info in sorted(oldest.glob("*.dist-info")):
        if any(owners[entry] > 1 for entry in _record_entries(dist_info)):
            continue  # shares a folder (a namespace package) with another dist: leave it be
        wheel = (dist_info / "WHEEL").read_text(encoding="utf-8")
        tags = [
            line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")
        ]
        if not tags or not all(tag.split("-")[1] == "abi3" for tag in tags):
            continue
        if not all((folder / dist_info.name).is_dir() for folder in others):
            continue  # not the same release everywhere
        for folder in others:
            for entry in _record_entries(folder / dist_info.name):
                path = folder / entry
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
            for entry in _record_entries(dist_info):
                source = oldest / entry
                if source.is_dir():
                    shutil.copytree(source, folder / entry)
                else:
                    shutil.copy2(source, folder / entry)


def _record_entries(dist_info: Path) -> set[str]:
    """The top-level entries a distribution installed (from its RECORD)."""
    lines = (dist_info / "RECORD").read_text(encoding="utf-8").splitlines()
    entries = {line.split(",", 1)[0].split("/", 1)[0] for line in lines if line.strip()}
    return {e for e in entries if e and e != ".." and (dist_info.parent / e).exists()}


def share(libs: Path, per_version: dict[str, Path]) -> None:
    """Keep one copy of each top-level entry that several versions have byte for byte: in
    `common/` when all have it, else in a folder named for the versions that do
    (`cp311+cp312+cp313`: e.g. a starlette release that needs Python 3.11, where 3.10 gets an
    older one), which the launcher puts on sys.path for each of them."""
    names = sorted({entry.name for folder in per_version.values() for entry in folder.iterdir()})
    for name in names:
        groups: dict[str, list[str]] = {}
        for tag, folder in per_version.items():
            if (folder / name).exists():
                groups.setdefault(tree_hash(folder / name), []).append(tag)
        for tags in groups.values():
            if len(tags) < 2:
                continue
            shared = libs / ("common" if len(tags) == len(per_version) else "+".join(tags))
            shared.mkdir(exist_ok=True)
            shutil.move(str(per_version[tags[0]] / name), shared / name)
            for tag in tags[1:]:
                path = per_version[tag] / name
                shutil.rmtree(path) if path.is_dir() else path.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--target", default="linux-x64", choices=sorted(PLATFORMS))
    parser.add_argument("--constraints", type=Path)
    parser.add_argument("--cache-dir", type=Path, help="keep each version's dependencies here")
    args = parser.parse_args()

    out: Path = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    libs = out / "libs"
    per_version: dict[str, Path] = {}
    for version in PYTHON_VERSIONS:
        tag = "cp" + version.replace(".", "")
        dest = libs / tag
        print(f"bundle: {args.target} CPython {version} -> {dest}", file=sys.stderr)
        cache = args.cache_dir.resolve() if args.cache_dir else None
        install_cached(version, dest, args.constraints, args.target, cache)
        per_version[tag] = dest

    reuse_abi3({tag: dest for tag, dest in per_version.items() if not tag.endswith("t")})
    share(libs, per_version)

    # The server itself is pure Python: copy the source package.
    common = libs / "common"
    common.mkdir(exist_ok=True)
    shutil.copytree(
        ROOT / "server" / "metis_memory",
        common / "metis_memory",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    tool = out / "tool"
    tool.mkdir(parents=True)
    shutil.copy2(ROOT / "extension" / "python" / "server.py", tool / "server.py")
    (out / "target.txt").write_text(args.target + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
