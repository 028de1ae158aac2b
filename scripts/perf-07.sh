#!/usr/bin/env bash
# Kafka 0.7 benchmark on loopback: starts kwire07-broker, runs `kwire07 perf produce` (1 KiB
# messages, batches of 200), `kwire07 perf consume` and `kwire07 perf latency`, each printing its
# ceilings (TCP loopback blast of the same bytes, sequential file write + fsync in the log's
# filesystem) and ratios from the same run. `perf consume` makes PASSES passes over the log,
# each followed by two blasts of as many bytes (their reader with the consumer's socket receive
# buffer): one writes a cache-resident buffer, the other sends a file from the page cache with
# sendfile as the broker sends its log; it compares the medians.
#
# The broker runs with 0.7's defaults (fsync every 500 messages, done by group commit off the
# append path) unless BROKER_ARGS says otherwise, e.g. BROKER_ARGS="--set log.flush.interval=10000"
# (the sample server.properties).
#
# CONGESTION=ALGO (e.g. cubic) gives the broker's connections that TCP congestion control
# (kwire.socket.congestion.control) and sends the consume ceiling with it too; unset, both use the
# system default. On loopback BBR paces FETCH answers (and the blast) well below what the
# machine can move; see the README.
#
# RUNS=N repeats the whole run N times (fresh broker and log each time) and ends with the median
# of every ratio: on a shared machine single runs vary a lot.
#
# Usage: scripts/perf-07.sh   (env: MESSAGES=500000 PORT=19092 BROKER_ARGS="--set k=v" KEEP=1 RUNS=1
#                                   PASSES=5 CONGESTION=cubic)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target="${CARGO_TARGET_DIR:-$root/target}"
kwire07="${KWIRE07:-$target/release/kwire07}"
broker="${KWIRE07_BROKER:-$target/release/kwire07-broker}"
if [ ! -x "$kwire07" ] || [ ! -x "$broker" ]; then
    (cd "$root" && cargo build --release -p kwire07-cli -p kwire07-broker --bins)
fi
messages="${MESSAGES:-500000}"
port="${PORT:-19092}"
work="${PERF_DIR:-$target/perf-07}"
runs="${RUNS:-1}"
passes="${PASSES:-5}"
broker_pid=

cleanup() {
    if [ -n "$broker_pid" ]; then
        kill -TERM "$broker_pid" 2>/dev/null || true
        wait "$broker_pid" 2>/dev/null || true
        broker_pid=
    fi
    # The log is hundreds of MB: keep it only when asked (KEEP=1).
    if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work/logs"; fi
}
trap cleanup EXIT

one_run() {
    rm -rf "$work"
    mkdir -p "$work/logs"
    local cc_broker=() cc_perf=()
    if [ -n "${CONGESTION:-}" ]; then
        cc_broker=(--set "kwire.socket.congestion.control=$CONGESTION")
        cc_perf=(--congestion "$CONGESTION")
    fi
    # shellcheck disable=SC2086
    "$broker" --log-dir "$work/logs" --port "$port" "${cc_broker[@]}" ${BROKER_ARGS:-} 2> "$work/broker.log" &
    broker_pid=$!
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
        sleep 0.05
    done
    echo "== $(date -u +%FT%TZ) kwire07 perf on 127.0.0.1:$port, $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)," \
        "congestion control: ${CONGESTION:-system default ($(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null))}"
    "$kwire07" --broker "127.0.0.1:$port" perf produce --topic perf --messages "$messages" --size 1024 \
        --batch-size 200 --ceiling-dir "$work"
    "$kwire07" --broker "127.0.0.1:$port" perf consume --topic perf --messages "$messages" --fetch-size 1048576 --runs "$passes" "${cc_perf[@]}"
    "$kwire07" --broker "127.0.0.1:$port" perf consume --topic perf --messages "$messages" --fetch-size 4194304 --runs "$passes" "${cc_perf[@]}"
    "$kwire07" --broker "127.0.0.1:$port" perf latency --topic perf-latency --messages 2000 --rate 500
    cleanup
}

if [ "$runs" = 1 ]; then
    one_run
    exit 0
fi

# Several runs: print each, then the medians.
out="$work.runs"
: > "$out"
for i in $(seq 1 "$runs"); do
    one_run | tee -a "$out"
done
median() { sort -n | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
echo "== medians of $runs runs"
echo "  produce MB/s                  $(grep -E '^  produce +[0-9]' "$out" | awk '{print $2}' | median)"
echo "  produce / lower ceiling %     $(grep 'lower ceiling' "$out" | awk '{print $NF}' | tr -d '%' | median)"
for size in 1048576 4194304; do
    rates=$(grep -A1 "fetch size $size" "$out" | grep '^  consume' | awk '{print $2}')
    echo "  consume ($size) MB/s      $(echo "$rates" | median)"
    for ceiling in loopback sendfile; do
        ratios=$(grep -A3 "fetch size $size" "$out" | grep "ceiling tcp $ceiling" | grep -o 'ratio [0-9]*' | awk '{print $2}')
        echo "  consume ($size) / tcp $ceiling %   $(echo "$ratios" | median)"
    done
done
echo "  latency p50 ms                $(grep -o 'p50 [0-9.]*' "$out" | awk '{print $2}' | median)"
echo "  latency p99 ms                $(grep -o 'p99 [0-9.]*' "$out" | awk '{print $2}' | median)"
