#!/usr/bin/env python3
"""kwire-fake against franz-go's kfake, side by side in one run.

Both clusters run as their own process (`kwire-fake-cluster`, and `bench/fake_vs_kfake/kfake`: kfake
behind the same command-line contract) with 3 nodes, in memory. The same kgo program
(`bench/fake_vs_kfake/load`) creates a topic of 6 partitions, produces FAKE_BENCH_MB MiB
(default 1024) of 1 KiB records with kgo's idempotent producer (acks all, no compression) and
reads them all back. Reported, as medians of RUNS (default 3) runs alternating between the two:
- start: from spawning the server to its `bootstrap.servers=` line (21 spawns each);
- produce and consume throughput in MB/s (10^6 bytes), and the whole round;
- peak memory: the server's VmHWM at the end of a run.

Usage: bench/fake_vs_kfake.py   (builds both with cargo and go first; Go is at /usr/local/go/bin)
BASELINE=path/to/an/older/kwire-fake-cluster adds that build as a third server, "before", so a
change to the cluster is measured against the build before it in the same run.
"""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GO_MODULE = os.path.join(ROOT, "bench", "fake_vs_kfake")
OUT = os.path.join(ROOT, "target", "fake_vs_kfake")
MB = int(os.environ.get("FAKE_BENCH_MB", "1024"))
RUNS = int(os.environ.get("RUNS", "3"))
RECORD, NODES, PARTITIONS, SPAWNS = 1024, 3, 6, 21


def build():
    env = dict(os.environ, PATH="/usr/local/go/bin:" + os.environ.get("PATH", ""))
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "kwire-fake"], cwd=ROOT, check=True)
    os.makedirs(OUT, exist_ok=True)
    subprocess.run(["go", "build", "-o", OUT + "/", "./kfake", "./load"], cwd=GO_MODULE, env=env, check=True)
    servers = {
        "kwire-fake": [os.path.join(ROOT, "target", "release", "kwire-fake-cluster"), "--listen", "127.0.0.1:0"],
        "kfake": [os.path.join(OUT, "kfake")],
    }
    if os.environ.get("BASELINE"):
        servers["before"] = [os.environ["BASELINE"], "--listen", "127.0.0.1:0"]
    return servers


def spawn(command):
    """Starts a server; returns it, its bootstrap servers and the seconds to its first line."""
    started = time.perf_counter()
    server = subprocess.Popen(command + ["--nodes", str(NODES)], stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    elapsed = time.perf_counter() - started
    if not line.startswith("bootstrap.servers="):
        server.kill()
        sys.exit(f"{command[0]}: first line {line!r}")
    return server, line.strip().split("=", 1)[1], elapsed


def stop(server):
    server.terminate()
    server.wait(timeout=30)


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def round_on(command, run):
    server, bootstrap, _ = spawn(command)
    try:
        out = subprocess.run(
            [os.path.join(OUT, "load"), bootstrap, f"bench-{run}", str(PARTITIONS), str(MB << 20), str(RECORD)],
            capture_output=True, text=True, timeout=1800,
        )
        if out.returncode != 0:
            sys.exit(f"load against {command[0]} failed: {out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["peak_mib"] = peak_rss_mib(server.pid)
        return result
    finally:
        stop(server)


def main():
    servers = build()
    starts = {name: [] for name in servers}
    for _ in range(SPAWNS):
        for name, command in servers.items():
            server, _, elapsed = spawn(command)
            starts[name].append(elapsed * 1000)
            stop(server)
    rounds = {name: [] for name in servers}
    for run in range(RUNS):
        for name, command in servers.items():
            result = round_on(command, run)
            print(f"run {run + 1} {name}: {json.dumps(result)}", flush=True)
            rounds[name].append(result)

    def median(name, metric):
        return statistics.median(metric(r) for r in rounds[name])

    metrics = {
        "start (ms)": lambda name: statistics.median(starts[name]),
        "produce (MB/s)": lambda name: median(name, lambda r: r["bytes"] / r["produce_s"] / 1e6),
        "consume (MB/s)": lambda name: median(name, lambda r: r["bytes"] / r["consume_s"] / 1e6),
        "produce + consume (MB/s)": lambda name: median(name, lambda r: r["bytes"] / (r["produce_s"] + r["consume_s"]) / 1e6),
        "peak memory (MiB)": lambda name: median(name, lambda r: r["peak_mib"]),
    }
    print(f"\n{MB} MiB of {RECORD}-byte records, {NODES} nodes, {PARTITIONS} partitions, medians of {RUNS} runs"
          f" ({SPAWNS} spawns for start)")
    before = "before" in rounds
    print(f"{'':28}{'kwire-fake':>16}{'kfake':>12}{'ratio':>8}" + (f"{'before':>12}{'ratio':>8}" if before else ""))
    for label, metric in metrics.items():
        ours, theirs = metric("kwire-fake"), metric("kfake")
        line = f"{label:28}{ours:16.1f}{theirs:12.1f}{ours / theirs:8.2f}"
        if before:
            old = metric("before")
            line += f"{old:12.1f}{ours / old:8.2f}"
        print(line)


if __name__ == "__main__":
    main()
