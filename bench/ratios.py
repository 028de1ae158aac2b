#!/usr/bin/env python3
"""Prints the criterion medians of messages_vs_kafka_protocol side by side and the ratio
kafka-protocol time / kafka-wire time (our throughput relative to theirs).

Usage: bench/ratios.py [CARGO_TARGET_DIR/criterion]"""
import json, os, sys, glob
root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CARGO_TARGET_DIR", "target") + "/criterion"
for group in sorted(glob.glob(root + "/*/")):
    g = os.path.basename(group.rstrip("/"))
    ops = {}
    for est in glob.glob(group + "*/new/estimates.json"):
        bench = est.split("/")[-3]
        op, _, side = bench.rpartition("_")
        med = json.load(open(est))["median"]["point_estimate"]
        ops.setdefault(op, {})[side] = med
    for op, sides in sorted(ops.items()):
        ours = sides.get("kafka-wire"); theirs = sides.get("kafka-protocol")
        extra = {k: v for k, v in sides.items() if k not in ("kafka-wire", "kafka-protocol")}
        if ours and theirs:
            print(f"{g:45} {op:18} ours {ours/1000:10.2f} µs  theirs {theirs/1000:10.2f} µs  ratio {theirs/ours:5.2f}", *[f"{k} {v/1000:.2f}µs ({theirs/v:.2f})" for k, v in extra.items()])
