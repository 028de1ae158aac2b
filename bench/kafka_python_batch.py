#!/usr/bin/env python3
"""Writes to stdout one RecordBatch (magic 2, uncompressed) built by kafka-python's own
producer code (kafka.record.default_records.DefaultRecordBatchBuilder, what KafkaProducer's
accumulator uses), holding the records of records/benches/common/records_workload.rs: the
same keys, values and timestamps, from the same xorshift generator. Used by the
records_vs_kafka_protocol bench, which decodes it with kwire and kafka-protocol.

Usage: kafka_python_batch.py [--headers]   (--headers: one `trace` header per record, as
instrumented producers add)"""
import sys

from kafka.record.default_records import DefaultRecordBatchBuilder

RECORDS, VALUE_LEN, MASK = 1024, 1000, (1 << 64) - 1


def values():
    state = 0x9E3779B97F4A7C15

    def next_():
        nonlocal state
        state ^= (state << 13) & MASK
        state ^= state >> 7
        state ^= (state << 17) & MASK
        return state

    for i in range(RECORDS):
        key = b"user-%08d" % (next_() % 100_000_000)
        value = bytearray()
        while len(value) < VALUE_LEN:
            ident = next_() % 1_000_000_000
            status = ["ok", "retry", "fail", "timeout"][next_() % 4]
            latency = next_() % 10_000
            value += ('{"seq":%d,"id":%d,"status":"%s","latency_ms":%d} ' % (i, ident, status, latency)).encode()
        yield key, bytes(value[:VALUE_LEN])


def main():
    headers = "--headers" in sys.argv[1:]
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=4 << 20)
    for i, (key, value) in enumerate(values()):
        record_headers = [("trace", b"%016x" % (i * 2654435761))] if headers else []
        if builder.append(i, 1_700_000_000_000 + i, key, value, record_headers) is None:
            sys.exit("kafka-python refused a record: the batch is full")
    sys.stdout.buffer.write(bytes(builder.build()))


if __name__ == "__main__":
    main()
