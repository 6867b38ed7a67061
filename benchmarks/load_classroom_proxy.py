"""A class on N server processes behind nginx with sticky sessions (``deploy/serve-class.sh``,
``deploy/nginx-class.conf``): the classroom of ``benchmarks/load_classroom.py`` (steppers on
the Teach page's step player beside order-MCMC runs on WBC) sent to the proxy's port.

Prints one JSON line per round: the classroom's figures (CPU and RSS of process 0) and, under
``servers``, each process's CPU seconds over the whole round and the most connections it held
at once (how the sticky hash spread the class). Needs
nginx (``apt-get install nginx``), Debian's chromium and playwright. Usage:

    PYTHONPATH=. .venv/bin/python benchmarks/load_classroom_proxy.py [--servers 2]
        [--steppers 30] [--runners 2] [--rounds warm]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from bnma_ui import ROOT
from bnma_ui.browser import free_port, headless_chromium, missing_requirement
from bnma_ui.loadtest import _descendants, classroom_round, cpu_seconds, load_average


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


def _established(port: int) -> int:
    """Established TCP connections to a local port (Linux ``/proc/net/tcp``)."""
    n = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        if int(f[1].split(":")[1], 16) == port and f[3] == "01":
            n += 1
    return n


class _Websockets:
    """The most connections each backend held at once, sampled every second."""

    def __init__(self, ports: list[int]) -> None:
        self.ports, self.peak = ports, {p: 0 for p in ports}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(1.0):
            for p in self.ports:
                self.peak[p] = max(self.peak[p], _established(p))

    def stop(self) -> dict[int, int]:
        self._done.set()
        self._thread.join()
        return self.peak


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--steppers", type=int, default=30)
    ap.add_argument("--runners", type=int, default=2)
    ap.add_argument("--rounds", nargs="+", default=["warm"])
    ap.add_argument("--min-seconds", type=float, default=60.0)
    ap.add_argument("--max-seconds", type=float, default=240.0)
    args = ap.parse_args(argv)
    reason = missing_requirement() or (None if shutil.which("nginx") else
                                       "nginx is absent (apt-get install nginx)")
    if reason:
        print(json.dumps({"skipped": reason}))
        return 0
    base = free_port()
    ports = [base + i for i in range(1, args.servers + 1)]
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"load_classroom_proxy_{args.servers}.log"
    with open(log, "w") as fh:
        script = subprocess.Popen(
            ["sh", str(ROOT / "deploy" / "serve-class.sh"), str(args.servers), str(base)],
            env={**os.environ, "PYTHON": sys.executable}, stdout=fh,
            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{base}"
        deadline = time.time() + 180
        while not (_healthy(url) and all(_healthy(f"http://127.0.0.1:{p}") for p in ports)):
            if script.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"the class's servers did not start; see {log}")
            time.sleep(0.5)  # polling the health endpoints
        by_port = {}
        for p in _descendants(script.pid):
            cmd = Path(f"/proc/{p}/cmdline").read_text(errors="ignore").split("\0")
            if "streamlit" in cmd and "--server.port" in cmd:
                by_port[int(cmd[cmd.index("--server.port") + 1])] = p
        pids = [by_port[port] for port in ports]
        print(json.dumps({"name": "classroom_proxy_started", "servers": args.servers,
                          "server_pids": pids, "uptime": load_average()}), flush=True)
        with headless_chromium() as browser:
            for label in args.rounds:
                cpu0 = {p: cpu_seconds(p) for p in pids}
                sockets = _Websockets(ports)
                res = classroom_round(browser, url, pids[0], label, args.steppers,
                                      args.runners, min_seconds=args.min_seconds,
                                      max_seconds=args.max_seconds, idle_seconds=10.0)
                peak = sockets.stop()
                row = {"name": f"load_classroom_proxy_{args.servers}x_{args.steppers}_"
                               f"{args.runners}_{label}", **res.as_dict(),
                       "servers": [{"port": port, "cpu_s": round(cpu_seconds(p) - cpu0[p], 1),
                                    "websockets_peak": peak[port]}
                                   for port, p in zip(ports, pids)],
                       "uptime_after": load_average()}
                print(json.dumps(row), flush=True)
    finally:
        os.killpg(script.pid, signal.SIGTERM)  # the script's group: nginx and its servers
        script.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
