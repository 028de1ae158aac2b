#!/usr/bin/env python3
"""Prints the criterion medians of the kafka-protocol benches side by side and the ratio
kafka-protocol time / kwire time (our throughput relative to theirs), for every group
under the criterion folder: messages_vs_kafka_protocol's (`decode`, `encode`) and the record
batch groups, whose benches carry a parameter (`decode[none]`, `decode[plain]`). Other sides
(`kwire-views`, `kwire-vectored`) are listed with their own ratio.

Usage: bench/ratios.py [CARGO_TARGET_DIR/criterion]"""
import glob
import json
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CARGO_TARGET_DIR", "target") + "/criterion"
for group in sorted(glob.glob(root + "/*/")):
    g = os.path.basename(group.rstrip("/"))
    ops = {}
    for est in glob.glob(group + "**/new/estimates.json", recursive=True):
        parts = os.path.relpath(est, group).split(os.sep)[:-2]
        op, _, side = parts[0].rpartition("_")
        if len(parts) > 1:
            op += "[" + "/".join(parts[1:]) + "]"
        ops.setdefault(op, {})[side] = json.load(open(est))["median"]["point_estimate"]
    for op, sides in sorted(ops.items()):
        ours, theirs = sides.get("kwire"), sides.get("kafka-protocol")
        extra = {k: v for k, v in sides.items() if k not in ("kwire", "kafka-protocol")}
        if ours and theirs:
            print(f"{g:45} {op:24} ours {ours/1000:10.2f} µs  theirs {theirs/1000:10.2f} µs  ratio {theirs/ours:5.2f}",
                  *[f"{k} {v/1000:.2f}µs ({theirs/v:.2f})" for k, v in extra.items()])
