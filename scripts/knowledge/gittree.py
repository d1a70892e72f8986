"""Reading an upstream repository at one commit, without a work tree (the builders' only view of upstream)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pin:
    """An upstream repository at the commit a bundle is built from."""

    repo: str
    commit: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}"


@dataclass(frozen=True)
class GitTree:
    """`git_dir` at `commit`: list and read files as they were then."""

    git_dir: Path
    commit: str

    def _git(self, *args: str) -> bytes:
        return subprocess.run(  # noqa: S603 - fixed git arguments, no shell
            ["git", "--git-dir", str(self.git_dir), *args],  # noqa: S607
            check=True,
            capture_output=True,
            timeout=300,
        ).stdout

    def files(self, folder: str) -> list[str]:
        """Every file path under `folder` (recursive), sorted."""
        out = self._git("ls-tree", "-r", "--name-only", self.commit, "--", folder)
        return sorted(line for line in out.decode("utf-8").splitlines() if line)

    def read(self, path: str) -> bytes:
        return self._git("show", f"{self.commit}:{path}")

    def text(self, path: str) -> str:
        return self.read(path).decode("utf-8")

    def date(self) -> str:
        """The commit's date, YYYY-MM-DD."""
        return self._git("show", "-s", "--format=%cs", self.commit).decode("ascii").strip()
