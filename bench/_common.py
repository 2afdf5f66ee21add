"""What the LLM benchmarks share: the fake server in a child process (so that its CPU is not the measured
process's), and figures of interleaved rounds as a median with its spread."""
from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(latency: float, *extra: str) -> tuple[subprocess.Popen, str]:
    """bench/fake_llm_server.py in a child process; (process, api_base) once it accepts connections."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(REPO / "bench" / "fake_llm_server.py"), "--port", str(port),
                             "--latency", str(latency), *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the fake server did not start")


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    """"median M (min A, max B; quartiles Q1-Q3)" of the values."""
    v = sorted(values)
    med = statistics.median(v)
    if len(v) >= 4:
        q = statistics.quantiles(v, n=4)
        quart = f"; quartiles {fmt.format(q[0])}-{fmt.format(q[2])}"
    else:
        quart = ""
    return f"median {fmt.format(med)} (min {fmt.format(v[0])}, max {fmt.format(v[-1])}{quart}; {len(v)} rounds)"
