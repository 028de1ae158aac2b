#!/usr/bin/env python3
"""Golden record batches from kafka-python, an implementation independent of kwire.

    records_golden.py generate   -> JSON on stdout: cases built with kafka.record builders,
                                    each with its bytes (hex), the inputs used, the builder
                                    options, and what kafka-python's own reader makes of it.
    records_golden.py decode     -> reads one hex string per stdin line (a whole `records`
                                    field), writes one JSON line per input: the batches and
                                    records kafka-python reads from it.

Needs kafka-python 3.x with python-snappy, lz4, zstandard and xxhash (xxhash for the broken
LZ4 header checksum of magic 0).
"""

import json
import random
import struct
import sys

import kafka
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords
from kafka.record.util import calc_crc32c

CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
BIG = 1 << 30  # batch_size large enough that every append fits


def hx(b):
    return None if b is None else bytes(b).hex()


# ---------------------------------------------------------------- reading

def record_json(rec, magic):
    out = {
        "offset": rec.offset,
        "timestamp": rec.timestamp,
        "timestamp_type": rec.timestamp_type,
        "key": hx(rec.key),
        "value": hx(rec.value),
        "headers": [[k.encode("utf-8").hex(), hx(v)] for k, v in rec.headers],
    }
    if hasattr(rec, "commit"):
        out["control"] = {"version": rec.version, "type": rec.type}
    return out


def batch_json(batch):
    crc_valid = batch.validate_crc()
    out = {
        "magic": batch.magic,
        "compression": CODECS[batch.compression_type],
        "base_offset": batch.base_offset,
        "timestamp_type": batch.timestamp_type,
        "crc_valid": crc_valid,
    }
    if batch.magic >= 2:
        out.update({
            "partition_leader_epoch": batch.leader_epoch,
            "last_offset_delta": batch.last_offset_delta,
            "base_timestamp": batch.first_timestamp,
            "max_timestamp": batch.max_timestamp,
            "producer_id": batch.producer_id,
            "producer_epoch": batch.producer_epoch,
            "base_sequence": batch.base_sequence,
            "transactional": batch.is_transactional,
            "control": batch.is_control_batch,
            "record_count": batch.records_count,
        })
    records = []
    for rec in batch:
        if batch.magic < 2 and not rec.validate_crc():
            raise ValueError("inner message CRC mismatch at offset %d" % rec.offset)
        records.append(record_json(rec, batch.magic))
    out["records"] = records
    return out


def read_records(data):
    mr = MemoryRecords(bytes(data))
    batches = []
    while mr.has_next():
        batches.append(batch_json(mr.next_batch()))
    return {"batches": batches, "truncated_bytes": len(data) - mr.valid_bytes()}


# ---------------------------------------------------------------- building

def v2_batch(records, codec=0, transactional=False, producer_id=-1, producer_epoch=-1,
             base_sequence=-1):
    b = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=transactional,
        producer_id=producer_id, producer_epoch=producer_epoch,
        base_sequence=base_sequence, batch_size=BIG)
    for r in records:
        meta = b.append(r["offset"], timestamp=r["timestamp"], key=r["key"], value=r["value"],
                        headers=r["headers"])
        assert meta is not None
    return bytearray(b.build())


def legacy_set(magic, records, codec=0):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=BIG)
    for r in records:
        assert b.append(r["offset"], timestamp=r["timestamp"], key=r["key"], value=r["value"]) is not None
    return bytearray(b.build())


def refresh_v2_crc(buf):
    """Recomputes the CRC-32C after patching CRC-covered header fields."""
    struct.pack_into(">I", buf, 17, calc_crc32c(bytes(buf[21:])))


def patch_v2(buf, base_offset=None, leader_epoch=None, attributes_or=0, max_timestamp=None):
    if base_offset is not None:
        struct.pack_into(">q", buf, 0, base_offset)
    if leader_epoch is not None:
        struct.pack_into(">i", buf, 12, leader_epoch)
    if attributes_or or max_timestamp is not None:
        attrs = struct.unpack_from(">h", buf, 21)[0]
        struct.pack_into(">h", buf, 21, attrs | attributes_or)
        if max_timestamp is not None:
            struct.pack_into(">q", buf, 35, max_timestamp)
        refresh_v2_crc(buf)
    return buf


def rnd_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def mixed_records(rng, with_headers, base_offset=0, ts=1_700_000_000_000):
    big = rnd_bytes(rng, 100 * 1024)
    compressible = b"kwire " * 3000
    rows = [
        (b"key", b"value", [("h1", b"v1")]),
        (None, b"null key", []),
        (b"", b"empty key", []),
        (b"null value", None, [("tombstone", None)]),
        (b"empty value", b"", [("", b"")]),
        (None, None, []),
        (b"k" * 300, big, [("dup", b"first"), ("dup", None), ("dup", b"third")]),
        (big[:70000], compressible, [("unicode-\u043a\u043b\u044e\u0447", big[:5000])]),
        (b"\x00\xff" * 8, b"\x80" * 130, [("x", b"y")] * 20),
    ]
    out = []
    for i, (k, v, h) in enumerate(rows):
        out.append({
            "offset": base_offset + i,
            # out of order on purpose: deltas go negative
            "timestamp": ts + (i * 37 % 11) - 5,
            "key": k,
            "value": v,
            "headers": h if with_headers else [],
        })
    return out


def many_records(n, with_headers, base_offset=0, ts=1_600_000_000_000):
    return [{
        "offset": base_offset + i,
        "timestamp": ts + i,
        "key": b"key-%d" % i,
        "value": (b"value-%d-" % i) * (i % 7 + 1),
        "headers": [("n", b"%d" % i)] if with_headers and i % 3 == 0 else [],
    } for i in range(n)]


def input_json(records):
    return [{
        "offset": r["offset"],
        "timestamp": r["timestamp"],
        "key": hx(r["key"]),
        "value": hx(r["value"]),
        "headers": [[k.encode("utf-8").hex(), hx(v)] for k, v in r["headers"]],
    } for r in records]


def options(magic, codec, **kw):
    o = {
        "magic": magic, "compression": CODECS[codec], "base_offset": 0,
        "partition_leader_epoch": 0, "producer_id": -1, "producer_epoch": -1,
        "base_sequence": -1, "transactional": False, "control": False,
        "log_append_time": None,
    }
    o.update(kw)
    return o


def case(name, data, opts=None, inputs=None):
    expected = read_records(data)
    for b in expected["batches"]:
        assert b["crc_valid"], name
    return {"name": name, "hex": bytes(data).hex(), "options": opts,
            "inputs": None if inputs is None else input_json(inputs), "expected": expected}


def generate():
    rng = random.Random(20261130)
    cases = []
    for codec in (0, 1, 2, 3, 4):
        name = CODECS[codec]
        recs = mixed_records(rng, True)
        cases.append(case("v2-%s-mixed" % name, v2_batch(recs, codec), options(2, codec), recs))
        recs = many_records(1000, True)
        cases.append(case("v2-%s-many" % name, v2_batch(recs, codec), options(2, codec), recs))
        recs = many_records(5, False)
        cases.append(case(
            "v2-%s-transactional" % name,
            v2_batch(recs, codec, transactional=True, producer_id=123456789012, producer_epoch=7,
                     base_sequence=42),
            options(2, codec, producer_id=123456789012, producer_epoch=7, base_sequence=42,
                     transactional=True),
            recs))
        recs = many_records(3, False)
        cases.append(case(
            "v2-%s-idempotent" % name,
            v2_batch(recs, codec, producer_id=99, producer_epoch=0, base_sequence=2147483600),
            options(2, codec, producer_id=99, producer_epoch=0, base_sequence=2147483600),
            recs))
        recs = many_records(4, True, base_offset=0)
        data = patch_v2(v2_batch(recs, codec), attributes_or=0x08, max_timestamp=1_650_000_000_123)
        cases.append(case("v2-%s-log-append-time" % name, data,
                          options(2, codec, log_append_time=1_650_000_000_123), recs))

    # Base offset and leader epoch lie outside the CRC, so a broker rewrites them in place.
    recs = many_records(10, True)
    shifted = [dict(r, offset=r["offset"] + 1_000_000_007) for r in recs]
    data = patch_v2(v2_batch(recs, 0), base_offset=1_000_000_007, leader_epoch=5)
    cases.append(case("v2-none-base-offset", data,
                      options(2, 0, base_offset=1_000_000_007, partition_leader_epoch=5), shifted))

    # Control batches (transaction markers) are written by brokers; kafka-python only reads
    # them, so build the marker record and set the control bit.
    for kind, name in ((1, "commit"), (0, "abort")):
        marker = [{"offset": 0, "timestamp": 1_700_000_000_999,
                   "key": struct.pack(">hh", 0, kind), "value": struct.pack(">hi", 0, 17),
                   "headers": []}]
        data = patch_v2(v2_batch(marker, 0, transactional=True, producer_id=4242,
                                 producer_epoch=3, base_sequence=-1), attributes_or=0x20)
        cases.append(case("v2-control-%s" % name, data,
                          options(2, 0, producer_id=4242, producer_epoch=3, transactional=True,
                                  control=True), marker))

    for magic in (0, 1):
        for codec in (0, 1, 2, 3):
            name = CODECS[codec]
            recs = mixed_records(rng, False)
            cases.append(case("v%d-%s-mixed" % (magic, name), legacy_set(magic, recs, codec),
                              options(magic, codec), recs))
            recs = many_records(300, False)
            cases.append(case("v%d-%s-many" % (magic, name), legacy_set(magic, recs, codec),
                              options(magic, codec), recs))
            recs = many_records(6, False, base_offset=5000)
            if magic == 0 or codec == 0:
                data = legacy_set(magic, recs, codec)
            else:
                # Inner offsets of a compressed magic 1 set are relative; the wrapper carries
                # the absolute offset of the last record (kafka-python leaves it 0 for brokers
                # to assign).
                rel = [dict(r, offset=r["offset"] - 5000) for r in recs]
                data = legacy_set(magic, rel, codec)
                struct.pack_into(">q", data, 0, recs[-1]["offset"])
            if magic == 0 and codec != 0:
                struct.pack_into(">q", data, 0, recs[-1]["offset"])
            cases.append(case("v%d-%s-offsets" % (magic, name), data,
                              options(magic, codec, base_offset=5000), recs))

    # Several formats in one field, as a fetch from an upgraded topic returns them, then a
    # partial trailing batch.
    parts = [legacy_set(0, many_records(3, False), 0),
             legacy_set(1, many_records(4, False, base_offset=3), 1),
             v2_batch(many_records(5, True, base_offset=0), 4)]
    struct.pack_into(">q", parts[1], 0, 6)
    patch_v2(parts[2], base_offset=7)
    whole = bytearray().join(parts)
    cases.append(case("mixed-magics", whole))
    tail = v2_batch(many_records(50, True), 0)
    for cut in (5, 12, 40, len(tail) - 1):
        cases.append(case("truncated-tail-%d" % cut, whole + tail[:cut]))

    json.dump({"kafka_python": kafka.__version__, "cases": cases}, sys.stdout)


def decode():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            result = read_records(bytes.fromhex(line))
        except Exception as e:  # report, keep going: the Rust side asserts
            result = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("generate", "decode"):
        sys.exit("usage: records_golden.py generate|decode")
    generate() if sys.argv[1] == "generate" else decode()
