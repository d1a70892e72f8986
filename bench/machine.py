"""What the figures were measured on: hardware, kernel and the versions of everything in the request path."""

from __future__ import annotations

import os
import platform
import re
import sqlite3
import subprocess
from pathlib import Path

import psycopg

from vigil import __version__

REPO = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.MULTILINE) if cpuinfo.exists() else None
    return found.group(1).strip() if found else platform.processor() or platform.machine()


def ram() -> str:
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        return "?"
    kib = int(meminfo.read_text().split("\n")[0].split()[1])
    return f"{kib / 1024 / 1024:.1f} GiB"


def postgres_version(url: str) -> str:
    try:
        with psycopg.connect(url, connect_timeout=5) as connection:
            row = connection.execute("SHOW server_version").fetchone()
    except psycopg.Error as error:
        return f"unreachable ({error.__class__.__name__})"
    return str(row[0]) if row else "?"


def command_output(*command: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    except OSError:
        return "?"
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else "?"


def git_commit() -> str:
    commit = command_output("git", "rev-parse", "--short", "HEAD")
    dirty = command_output("git", "status", "--porcelain", "--untracked-files=no")
    return commit + (" (with uncommitted changes)" if dirty not in ("?", "") else "")


def facts(pg_url: str) -> dict[str, str]:
    """Name → value, in the order a reader wants them."""
    return {
        "CPU": f"{cpu_model()}, nproc {os.cpu_count()}",
        "RAM": ram(),
        "kernel": platform.release(),
        "Python": platform.python_version(),
        "PostgreSQL": postgres_version(pg_url),
        "SQLite": sqlite3.sqlite_version,
        "wrk": command_output("wrk", "--version").split(" Copyright")[0],
        "Vigil": f"{__version__}, commit {git_commit()}",
        "load average (1 min) at the end": f"{os.getloadavg()[0]:.2f}",
    }
