#!/usr/bin/env python3
"""The producer bench: kwire's producer against franz-go's kgo, librdkafka (the `rdkafka` crate)
and Kafka's Java ProducerPerformance, side by side in one run, against one Apache Kafka 4.4 broker
this script starts (test-support's, through `producer-bench kafka`).

Each client produces PRODUCER_BENCH_MB MiB (default 1024) of 1 KiB records to a fresh topic of 6
partitions, acks=all, idempotent, its own defaults otherwise, with compression none and lz4;
RUNS (default 3) runs alternating between the clients. Reported, as medians:
- `ours` runs with its defaults (batch.size 1,000,000 and max.request.size 100 MiB, kgo's sizes;
  librdkafka's batch.size is 1,000,000 too), `ours-16k` with the Java client's (batch.size 16 KiB,
  max.request.size 1 MiB); linger.ms 5 for both;
- throughput in MB/s (10^6 bytes of record values per second, from the first send to the last
  acknowledgement, as each client times itself);
- client CPU seconds (user + system, from wait4) per GB (10^9 bytes) produced;
- the client's peak memory (maxrss);
- the broker's CPU over the run, in cores (the machine has 2: when the broker takes about one
  and the client the other, the machine, not the client, is the limit);
- then p50/p99 delivery latency (send call to acknowledgement, per record) with every client at
  a fixed rate of half the slowest client's median throughput (LATENCY_SECS, default 20 s, of
  records; LATENCY_RUNS, default 3, runs alternating).

Usage: bench/producer/run.py   (builds the Rust bench and the Go program first; not run by CI)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "target", "producer-bench")
MB = int(os.environ.get("PRODUCER_BENCH_MB", "1024"))
RUNS = int(os.environ.get("RUNS", "3"))
LATENCY_RUNS = int(os.environ.get("LATENCY_RUNS", "3"))
LATENCY_SECS = int(os.environ.get("LATENCY_SECS", "20"))
CLIENTS = os.environ.get("CLIENTS", "ours,ours-16k,kgo,rdkafka,java").split(",")
CODECS = os.environ.get("CODECS", "none,lz4").split(",")
RECORD, PARTITIONS = 1024, 6
BENCH = os.path.join(OUT, "cargo", "release", "producer-bench")
JARS = os.path.join(ROOT, "target", "kafka", "broker-4.4.0")


def build():
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(OUT, "cargo"))
    subprocess.run(["cargo", "build", "-q", "--release", "--manifest-path", os.path.join(HERE, "Cargo.toml")],
                   env=env, check=True)
    go_env = dict(os.environ, PATH="/usr/local/go/bin:" + os.environ.get("PATH", ""))
    subprocess.run(["go", "build", "-o", OUT + "/", "./kgo"], cwd=HERE, env=go_env, check=True)


def descendants(pid):
    """Every process under `pid` (the broker's JVM sits under a shell under the bench)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except OSError:
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def cpu_seconds(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


def start_kafka():
    kafka = subprocess.Popen([BENCH, "kafka"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = kafka.stdout.readline()
    if not line.startswith("bootstrap="):
        sys.exit(f"producer-bench kafka: {line!r}")
    return kafka, line.strip().split("=", 1)[1]


def command(client, bootstrap, topic, total, codec, rate):
    if client in ("ours", "rdkafka"):
        return [BENCH, client, bootstrap, topic, str(total), str(RECORD), codec, str(rate)]
    if client == "ours-16k":
        # Ours with the Java client's sizes instead of its defaults (kgo's).
        return [BENCH, "ours", bootstrap, topic, str(total), str(RECORD), codec, str(rate), "batch.size=16384",
                "max.request.size=1048576"]
    if client == "kgo":
        return [os.path.join(OUT, "kgo"), bootstrap, topic, str(total), str(RECORD), codec, str(rate)]
    return ["java", "-Xmx512M", "-cp", JARS + "/*", "org.apache.kafka.tools.ProducerPerformance",
            "--topic", topic, "--num-records", str(total // RECORD), "--record-size", str(RECORD),
            "--throughput", str(rate if rate > 0 else -1), "--producer-props", f"bootstrap.servers={bootstrap}",
            "acks=all", "enable.idempotence=true", f"compression.type={codec}"]


JAVA_LINE = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                       r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th")


def parse(client, codec, stdout):
    if client != "java":
        return json.loads(stdout.strip().splitlines()[-1])
    m = JAVA_LINE.search(stdout)
    if not m:
        raise RuntimeError(f"ProducerPerformance said: {stdout[-500:]}")
    records, per_s = int(m.group(1)), float(m.group(2))
    seconds = records / per_s
    return {"client": "java", "codec": codec, "records": records, "bytes": records * RECORD, "seconds": seconds,
            "mb_per_s": records * RECORD / 1e6 / seconds, "p50_ms": float(m.group(6)), "p99_ms": float(m.group(8)),
            "errors": 0}


def run(client, bootstrap, kafka_pids, name, total, codec, rate):
    subprocess.run([BENCH, "topic", bootstrap, name, str(PARTITIONS)], check=True)
    broker_before = cpu_seconds(kafka_pids)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command(client, bootstrap, name, total, codec, rate), stdout=subprocess.PIPE,
                                stderr=err, text=True)
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if status != 0:
            err.seek(0)
            sys.exit(f"{client} {codec} failed: {err.read().decode()[-2000:]}")
    broker = cpu_seconds(kafka_pids) - broker_before
    subprocess.run([BENCH, "topic", bootstrap, name, "0"], check=True)
    result = parse(client, codec, stdout)
    result.update(cpu_s=usage.ru_utime + usage.ru_stime, peak_mib=usage.ru_maxrss / 1024,
                  broker_cores=broker / wall, wall_s=wall)
    result["cpu_s_per_gb"] = result["cpu_s"] / (result["bytes"] / 1e9)
    print(json.dumps(result), flush=True)
    return result


def median(results, key):
    return statistics.median(r[key] for r in results)


def main():
    build()
    kafka, bootstrap = start_kafka()
    time.sleep(2)
    kafka_pids = descendants(kafka.pid)
    total = MB << 20
    throughput = {}
    latency = {}
    n = 0
    try:
        for codec in CODECS:
            for r in range(RUNS):
                order = CLIENTS if r % 2 == 0 else list(reversed(CLIENTS))
                for client in order:
                    n += 1
                    throughput.setdefault((client, codec), []).append(
                        run(client, bootstrap, kafka_pids, f"bench-{n}", total, codec, 0))
            slowest = min(median(throughput[(c, codec)], "mb_per_s") for c in CLIENTS)
            rate = int(slowest * 1e6 / RECORD / 2)
            for r in range(LATENCY_RUNS):
                order = CLIENTS if r % 2 == 0 else list(reversed(CLIENTS))
                for client in order:
                    n += 1
                    latency.setdefault((client, codec), []).append(
                        run(client, bootstrap, kafka_pids, f"bench-{n}", rate * LATENCY_SECS * RECORD, codec, rate))
            latency[("rate", codec)] = rate
    finally:
        kafka.stdin.close()
        kafka.wait(timeout=60)
    rows = []
    print(f"\n{MB} MiB of {RECORD}-byte records, {PARTITIONS} partitions, acks=all, idempotent; "
          f"medians of {RUNS} runs (latency: {LATENCY_RUNS} runs of {LATENCY_SECS} s)\n")
    print("| client | codec | MB/s | client CPU s/GB | peak MiB | broker CPU (cores) | rate (rec/s) | p50 ms | p99 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for codec in CODECS:
        for client in CLIENTS:
            t, l = throughput[(client, codec)], latency.get((client, codec), [])
            row = {"client": client, "codec": codec, "mb_per_s": median(t, "mb_per_s"),
                   "cpu_s_per_gb": median(t, "cpu_s_per_gb"), "peak_mib": median(t, "peak_mib"),
                   "broker_cores": median(t, "broker_cores"), "rate": latency.get(("rate", codec), 0),
                   "p50_ms": median(l, "p50_ms") if l else -1, "p99_ms": median(l, "p99_ms") if l else -1}
            rows.append(row)
            print(f"| {client} | {codec} | {row['mb_per_s']:.0f} | {row['cpu_s_per_gb']:.2f} | {row['peak_mib']:.0f} "
                  f"| {row['broker_cores']:.2f} | {row['rate']} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} |")
    for codec in CODECS:
        get = {r["client"]: r for r in rows if r["codec"] == codec}
        if "ours" in get and "kgo" in get and "rdkafka" in get:
            print(f"{codec}: throughput ours/kgo {get['ours']['mb_per_s'] / get['kgo']['mb_per_s']:.2f}, "
                  f"CPU per GB ours/librdkafka {get['ours']['cpu_s_per_gb'] / get['rdkafka']['cpu_s_per_gb']:.2f}")
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump({"rows": rows, "runs": {f"{k[0]}/{k[1]}": v for k, v in {**throughput}.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
