"""Every install line a person can copy names the distribution pyproject.toml publishes:
the README, the VSIX's README, docs/, CONTRIBUTING.md, the integrations' and examples'
comments, what the extension and the package say, and the advice the real `metis-memory
init` prints when the command is not on PATH. `metis-memory` on PyPI is someone else's
project: a line naming it would install a stranger's code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from support.project_docs import ROOT, all_pages, distribution_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 interpreter
    import tomli as tomllib

TAKEN = {"metis-memory": "an unrelated project's (0.1.0-0.1.6, published October 2026)"}
"""Names on PyPI that are not ours, as checked (CONTRIBUTING.md, "Names")."""

INSTALL = re.compile(
    r"(?:\bpipx install|\buv tool install|\buv pip install|(?:\bpython3? -m )?\bpip3? install)\b"
    r"(?P<rest>[^\n`#]*)"
)
OPTIONS_WITH_VALUE = {
    "--target", "-t", "--python", "-r", "--requirement", "-c", "--constraint", "--platform",
    "--python-version", "--implementation", "--abi", "--index-url", "-i", "--suffix",
    "--pip-args", "--cache-dir",
}  # fmt: skip
STOP = {"#", "&&", "||", ";", "|", "\\"}
PLACEHOLDER = re.compile(r"<dependencies>|\{DISTRIBUTION\}")
"""docs/vscode.md's bundling command stands for the list bundle_python.py reads; the
package's messages format in `_version.DISTRIBUTION` (its test runs the real CLI)."""


@dataclass(frozen=True)
class Line:
    where: str
    command: str
    packages: tuple[str, ...]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def packages(rest: str) -> tuple[str, ...]:
    """The requirement words after `... install`: options and their values left out, up to
    a comment, a shell operator or the end of a sentence's code."""
    out: list[str] = []
    words = rest.split()
    skip = False
    for raw in words:
        word = raw.strip("'\"")
        while len(word) > 1 and word[-1] in "),;:.'\"" and not word.endswith(".."):
            word = word[:-1]
        if raw in STOP or raw.startswith(("(", "#")):
            break
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in OPTIONS_WITH_VALUE
            continue
        if word:
            out.append(word)
    return tuple(out)


def install_lines(text: str, where: str) -> list[Line]:
    text = re.sub(r"\\\n\s*", " ", text)  # a shell line continued with a backslash
    return [
        Line(where, m.group(0).strip(), packages(m.group("rest"))) for m in INSTALL.finditer(text)
    ]


def is_local(word: str) -> bool:
    """A dev install of this checkout (`.`, `.[dev]`, a path) or a built wheel."""
    return word.startswith((".", "/", "~")) or "/" in word or word.endswith((".whl", ".tar.gz"))


def extras() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return set(tomllib.load(f)["project"].get("optional-dependencies", {}))


def wrong(line: Line) -> list[str]:
    ours = distribution_name()
    problems = []
    for word in line.packages:
        if is_local(word) or PLACEHOLDER.fullmatch(word):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([\w,\s-]*)\])?(.*)", word)
        if m is None or canonical(m.group(1)) != canonical(ours):
            problems.append(f"{line.where}: `{line.command}` installs {word!r}, not {ours!r}")
            continue
        unknown = {e.strip() for e in (m.group(2) or "").split(",") if e.strip()} - extras()
        if unknown:
            problems.append(f"{line.where}: `{line.command}` asks for extras {sorted(unknown)}")
    return problems


def scanned_files() -> list[Path]:
    code = [
        *sorted((ROOT / "server" / "metis_memory").rglob("*.py")),
        *sorted((ROOT / "extension" / "src").rglob("*.ts")),
        *sorted((ROOT / "extension" / "walkthrough").rglob("*.md")),
        *sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in {".lua", ".el", ".md"}),
    ]
    return [*all_pages(), *code]


def file_lines() -> list[Line]:
    out: list[Line] = []
    for path in scanned_files():
        where = path.relative_to(ROOT).as_posix()
        out += install_lines(path.read_text(encoding="utf-8"), where)
    return out


def init_advice(tmp_path: Path) -> str:
    """What the real `metis-memory init` prints, run where the command is not on PATH."""
    script = Path(sys.executable).parent / "metis-memory"
    assert script.exists(), f"no console script at {script}: make venv installs it"
    path = os.pathsep.join(
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "metis-memory").exists()
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    done = subprocess.run(
        [str(script), "init", str(workspace)],
        env={**os.environ, "PATH": path, "HOME": str(tmp_path)},
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_the_distribution_name_is_not_someone_elses() -> None:
    name = canonical(distribution_name())
    assert name not in TAKEN, f"{name!r} on PyPI is {TAKEN[name]}: publish under a free name"


def test_the_default_install_carries_the_mcp_server_init_wires() -> None:
    """`init` writes MCP entries for every host by default: one `pipx install NAME` must
    bring the SDK, and `NAME[mcp]` (what older notes say) must still resolve."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    names = {re.match(r"[A-Za-z0-9._-]+", r).group(0) for r in project["dependencies"]}  # type: ignore[union-attr]
    assert "mcp" in names, f"mcp is only an extra: {project['dependencies']}"
    assert "mcp" in project["optional-dependencies"]


def test_every_install_line_in_the_docs_and_sources_names_our_distribution() -> None:
    lines = file_lines()
    where = {line.where for line in lines if line.packages}
    for page in ("README.md", "extension/README.md", "CONTRIBUTING.md"):
        assert page in where, f"{page} has no install line to check"
    problems = [p for line in lines for p in wrong(line)]
    assert problems == [], "\n".join(problems)


def test_inits_advice_names_our_distribution(tmp_path: Path) -> None:
    output = init_advice(tmp_path)
    lines = [line for line in install_lines(output, "init's output") if line.packages]
    assert {"pipx", "uv"} <= {line.command.split()[0] for line in lines}, output
    problems = [p for line in lines for p in wrong(line)]
    assert problems == [], "\n".join(problems)
    assert "[mcp]" not in output  # the default install carries it


def test_the_scanner_finds_what_a_page_writes() -> None:
    """The parser itself, on the shapes the pages use."""
    text = (
        "```sh\npipx install 'metis-agent-memory[mcp]'   # or: uv tool install x-y\n"
        "pip install --target dist/x --only-binary=:all: \\\n    --platform p <dependencies>\n"
        "```\nrun `pip install -e '.[dev]'` and `pip install` by hand (pip install x-z).\n"
        "pip install .\npipx installs its commands\n"
    )
    found = [(line.command.split()[0], line.packages) for line in install_lines(text, "t")]
    assert found == [
        ("pipx", ("metis-agent-memory[mcp]",)),
        ("uv", ("x-y",)),
        ("pip", ("<dependencies>",)),
        ("pip", (".[dev]",)),
        ("pip", ()),
        ("pip", ("x-z",)),
        ("pip", (".",)),
    ]


def test_the_package_names_the_distribution_pyproject_publishes() -> None:
    from metis_memory._version import DISTRIBUTION

    assert distribution_name() == DISTRIBUTION
