"""Sample a running server with py-spy (when installed) and print where its time goes.

Used by ``load_bench --profile``: inclusive and self shares of the sampled stacks, by function
and file, the remaining profile the issue note reports.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

_FRAME = re.compile(r"(.*?) \((.*?):\d+\)")


def start(pid: int, seconds: float) -> tuple[subprocess.Popen[bytes], Path] | None:
    spy = shutil.which("py-spy") or str(Path(__import__("sys").executable).parent / "py-spy")
    if not Path(spy).exists():
        print("  (py-spy is not installed: pip install py-spy)")
        return None
    out = Path(tempfile.mkdtemp(prefix="dt-spy-")) / "stacks.txt"
    proc = subprocess.Popen([spy, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", "250",
                             "--format", "raw", "-o", str(out), "--nonblocking", "--gil"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, out


def summary(path: Path, top: int = 45) -> str:
    incl: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, tail = line.rpartition(" ")
        if not stack or not tail.isdigit():
            continue
        count = int(tail)
        total += count
        names = []
        for frame in stack.split(";"):
            m = _FRAME.match(frame)
            names.append(f"{m.group(1)} ({m.group(2).rsplit('/', 1)[-1]})" if m else frame)
        for name in set(names):
            incl[name] += count
        own[names[-1]] += count
    if not total:
        return "  (no samples)"
    lines = [f"  profile: {total} samples; inclusive (top {top}):"]
    skip = ("thread (", "<module>", "_run_code", "_run_module", "Runner.run", "asyncio_run",
            "Command.", "Context.invoke", "main (main.py)", "run (main.py)", "Server.")
    shown = 0
    for name, hits in incl.most_common():
        if name.startswith(skip):
            continue
        lines.append(f"    {100 * hits / total:5.1f}%  {name}")
        shown += 1
        if shown >= top:
            break
    lines.append("  self (top 15):")
    for name, hits in own.most_common(15):
        lines.append(f"    {100 * hits / total:5.1f}%  {name}")
    return "\n".join(lines)


def finish(handle: tuple[subprocess.Popen[bytes], Path] | None) -> None:
    if handle is None:
        return
    proc, out = handle
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
    if out.exists():
        print(summary(out), flush=True)
        keep = os.environ.get("DT_SPY_KEEP")
        if keep:  # the raw stacks, for a closer look
            shutil.copyfile(out, keep)
    shutil.rmtree(out.parent, ignore_errors=True)
