#!/usr/bin/env python3
"""Golden Kafka message bytes from an independent implementation: kafka-python 3.x.

kafka-python 3 carries two protocol codecs of its own, written in Python:
  * `kafka.protocol`: a codec driven by its copy of Kafka's JSON schemas (every version of
    52 APIs, flexible versions, tagged fields, nullable structs);
  * `kafka.protocol.old`: its hand-written per-version Structs (the 2.x definitions).
This script fills every request and response of both, at every version they encode, with
non-trivial values (non-ASCII strings, nulls where nullable, arrays of several elements,
negative and extreme numbers, true booleans, UUIDs, bit fields, real record batches built by
`kafka.record`, known tagged fields and, through the old Structs, unknown tagged fields) and
prints the bytes kafka-python writes, for kwire to decode and reproduce exactly.

Usage (run with a python that has kafka-python installed):

    messages_golden.py [encode] [--supported JSON] [--values golden|minimal]
        Prints one JSON object per line:
          {"kind": "request"|"response", "api_key", "version", "source", "variant", "name", "hex"}
              a body, without header or size prefix;
          {"kind": "request_frame"|"response_frame", ...same keys}
              header + body: the bytes after the int32 size prefix (kafka.protocol only);
          {"kind": "excluded", "api_key", "version", "source", "name", "reason"}
              a kafka-python definition left out because it contradicts Kafka's schema.
        `source` is "kafka.protocol" or "kafka.protocol.old"; `variant` numbers the value
        sets of one API version. `--supported` is a JSON object {"<api_key>": [min, max]}:
        only those APIs and versions are emitted (what the reader implements); without it,
        every version kafka-python encodes. `--values minimal` prints seed 001's smallest
        legal instance of each kafka.protocol message instead (one value set, no old Structs).

    messages_golden.py decode [--values golden|minimal]
        Reads such JSON lines on stdin, whose "hex" another encoder wrote for the same case,
        decodes each with kafka-python at its version, and checks that the value equals the
        one this script builds for the case and that kafka-python writes it back to exactly
        the same bytes (which also proves every byte was consumed). Prints one JSON verdict
        per case ({"ok", "kind", "api_key", "version", "name", "detail"}) and a summary line;
        exits 1 if any case failed.

Values are deterministic: the same kafka-python version always prints the same bytes.
Counts of what the cases exercise (tagged fields set, nulls) go to stderr.
"""

import functools
import importlib
import io
import json
import pkgutil
import struct
import sys
import uuid

import kafka
import kafka.protocol.admin
import kafka.protocol.consumer
import kafka.protocol.metadata
import kafka.protocol.old
import kafka.protocol.producer
import kafka.protocol.sasl
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.old import api as old_api
from kafka.protocol.old import types as old_types
from kafka.protocol.data_container import DataContainer
from kafka.protocol.schemas.fields.codecs import BitField
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.util import calc_crc32c

MODULES = (
    kafka.protocol.producer,
    kafka.protocol.consumer,
    kafka.protocol.metadata,
    kafka.protocol.admin,
    kafka.protocol.sasl,
)


def message_classes():
    """Every request and response class kafka-python defines, by (api_key, kind)."""
    found = {}
    for module in MODULES:
        for name in getattr(module, '__all__', dir(module)):
            obj = getattr(module, name, None)
            if (isinstance(obj, type) and issubclass(obj, ApiMessage) and obj is not ApiMessage
                    and getattr(obj, '_class_version', None) is None):
                found[(obj.API_KEY, obj.type)] = obj
    return [found[k] for k in sorted(found)]


# What the generated cases exercise, printed to stderr.
STATS = {'tagged fields set': 0, 'nulls': 0, 'non-null nullables': 0, 'unknown tags set (old)': 0}


class Values:
    """Deterministic, varied, schema-legal values. `seed` makes each case differ."""

    STRINGS = (
        'kåfka-wire ✓ {n}',
        'topic-{n}',
        'ünïcödé 日本語 ключ {n}',
        '',
        'emoji 🦀 {n}',
    )
    INT8 = (-7, 5, 127, -128, 1)
    INT16 = (-300, 12345, 32767, -32768, 3)
    UINT16 = (65535, 4242, 1, 32768)
    INT32 = (-123456, 2147483647, 7, -2147483648, 65536)
    INT64 = (9007199254740993, -1, -9223372036854775808, 1234567890123456789, 9223372036854775807)
    FLOAT64 = (3.5, -0.125, 1e300, 0.1, -2.5e-300)

    def __init__(self, seed, variant=0):
        self.n = seed
        # Variant 0: about one nullable field in three null, two tagged fields in three set.
        # Variant 1: two nullable fields in three null, every tagged field set.
        self.variant = variant

    def tick(self):
        self.n += 1
        return self.n

    def pick(self, options):
        return options[self.tick() % len(options)]

    def take_null(self):
        n = self.tick() % 3
        null = n == 0 if self.variant == 0 else n != 0
        STATS['nulls' if null else 'non-null nullables'] += 1
        return null

    def set_tagged(self):
        return self.variant == 1 or self.tick() % 3 != 0

    def records(self, magic):
        return record_data(self, magic)

    def array_len(self):
        return self.pick((2, 3, 2, 1, 3, 2, 0))

    def simple(self, type_str, tagged=False, default=None):
        n = self.tick()
        if type_str == 'int8':
            v = self.pick(self.INT8)
        elif type_str == 'int16':
            v = self.pick(self.INT16)
        elif type_str == 'uint16':
            v = self.pick(self.UINT16)
        elif type_str == 'int32':
            v = self.pick(self.INT32)
        elif type_str == 'int64':
            v = self.pick(self.INT64)
        elif type_str == 'float64':
            v = self.pick(self.FLOAT64)
        elif type_str == 'bool':
            v = n % 5 != 0 or tagged
        elif type_str == 'uuid':
            v = uuid.UUID(int=(0x0123456789ABCDEF << 64) | (n * 0x9E3779B97F4A7C15 & ((1 << 64) - 1)) | 1)
        elif type_str == 'string':
            v = self.pick(self.STRINGS).format(n=n)
            if tagged and v == '':
                v = 'tagged-{}'.format(n)
        elif type_str == 'bytes':
            v = bytes([0, 1, 0xfe, 0xff, n & 0xff]) if (n % 6 or tagged) else b''
        elif type_str == 'bitfield':
            v = {1, 3, 5 + n % 20}
        else:
            raise ValueError('unexpected simple type %s' % type_str)
        if tagged and v == default:
            # Tagged fields are only written when they differ from their default.
            if isinstance(v, bool):
                v = not v
            elif isinstance(v, int):
                v = v + 1 if v < 0 else v - 1
            elif isinstance(v, float):
                v = v + 1.0
        return v


class MinimalValues:
    """Seed 001's smallest legal instance: numbers zero, booleans false, strings and bytes
    empty, UUIDs zero, nothing null, every array with exactly one element, no tagged field
    set, records one empty RecordBatch v2 (61 bytes)."""

    ZEROS = {'int8': 0, 'int16': 0, 'uint16': 0, 'int32': 0, 'int64': 0, 'float64': 0.0,
             'bool': False, 'uuid': None, 'string': '', 'bytes': b''}

    def tick(self):
        return 0

    def take_null(self):
        return False

    def set_tagged(self):
        return False

    def array_len(self):
        return 1

    def records(self, magic):
        return empty_record_batch()

    def simple(self, type_str, tagged=False, default=None):
        if type_str == 'bitfield':
            return set()
        return self.ZEROS[type_str]


def empty_record_batch():
    """The 61-byte RecordBatch v2 with every number zero and no records (CRC-32C filled in)."""
    # attributes, last offset delta, base and max timestamps, producer id, producer epoch,
    # base sequence, record count
    after_crc = bytes(2 + 4 + 8 + 8 + 8 + 2 + 4 + 4)
    crc = calc_crc32c(after_crc)
    batch = struct.pack('>qiib', 0, 49, 0, 2) + struct.pack('>I', crc) + after_crc
    assert len(batch) == 61
    return batch


def record_data(values, magic):
    """A real record batch (v2) or legacy message set (v0/v1) built by kafka.record."""
    n = values.tick()
    if magic >= 2:
        builder = DefaultRecordBatchBuilder(
            magic=2, compression_type=0, is_transactional=False,
            producer_id=4242 + n, producer_epoch=3, base_sequence=17, batch_size=1 << 20)
        builder.append(0, 1700000000000 + n, b'key-%d' % n, 'wërt ✓ {}'.format(n).encode(),
                       [('h1', b'v1'), ('hé', None)])
        builder.append(1, 1700000000123 + n, None, b'second value', [])
        builder.append(2, 1700000000456 + n, b'', b'', [('x', b'')])
    else:
        builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
        builder.append(0, 1700000000000 + n if magic else None, b'key-%d' % n, b'legacy value')
        builder.append(1, 1700000000123 + n if magic else None, None, b'second')
    return bytes(builder.build())


def record_magic(api_key, version):
    if api_key == 0:  # Produce: v0-1 magic 0, v2 magic 1, v3+ magic 2
        return 0 if version <= 1 else 1 if version == 2 else 2
    if api_key == 1:  # Fetch: v0-1 magic 0, v2-3 magic 1, v4+ magic 2
        return 0 if version <= 1 else 1 if version <= 3 else 2
    return 2


# Values a peer reads specially. kafka-python reads an ApiVersionsResponse whose error code
# is not zero as version 0 (a broker answers an ApiVersions version it does not support with
# a v0 body), so the decode check could not read such a case back; the golden value keeps
# the error code zero. Every other field is generated.
OVERRIDES = {
    (18, 'response'): {'error_code': 0},
}


class Builder:
    """Fills a kafka-python message class at one version."""

    def __init__(self, cls, version, values):
        self.cls = cls
        self.version = version
        self.values = values

    def message(self, overrides=True):
        fields = self.struct_fields(self.cls._struct, in_tagged=False)
        if overrides:
            fields.update(OVERRIDES.get((self.cls.API_KEY, self.cls.type), {}))
        return self.cls(version=self.version, **fields)

    def struct_fields(self, struct, in_tagged):
        v = self.version
        out = {}
        last_tag = -1
        for field in struct._fields:
            if not field.for_version_q(v):
                continue
            tagged = field.tagged_field_q(v)
            if tagged:
                # kafka-python writes tagged fields in schema order and writes no tagged
                # fields inside a tagged struct: keep ours canonical (ascending tags, none
                # nested), so a decode and re-encode can reproduce the bytes exactly.
                if in_tagged or field.tag <= last_tag:
                    continue
                # Leave some tagged fields at their default (absent on the wire).
                if not self.values.set_tagged():
                    continue
                last_tag = field.tag
                STATS['tagged fields set'] += 1
            out[field.name] = self.value(field, in_tagged or tagged, tagged)
        return out

    def nullable(self, field):
        return field.nullable_for_version_q(self.version)

    def value(self, field, in_tagged, tagged):
        values = self.values
        if field.is_struct_array():
            if self.nullable(field) and not tagged and values.take_null():
                return None
            count = values.array_len()
            if tagged and count == 0:
                count = 2
            return [field.data_class(**self.struct_fields(field.array_of, in_tagged))
                    for _ in range(count)]
        if field.is_struct():
            if self.nullable(field) and not tagged and values.take_null():
                return None
            return field.data_class(**self.struct_fields(field, in_tagged))
        if field.is_array():
            if self.nullable(field) and not tagged and values.take_null():
                return None
            count = values.array_len()
            if tagged and count == 0:
                count = 2
            inner = field.array_of
            # Elements share the array's JSON (and so its nullableVersions and default),
            # but array elements are never null.
            return [self.simple(inner, False, element=True) for _ in range(count)]
        return self.simple(field, tagged)

    def simple(self, field, tagged, element=False):
        values = self.values
        type_str = field.type_str
        if field._type is BitField:
            type_str = 'bitfield'
        if not element and self.nullable(field) and not tagged and values.take_null():
            return None
        if type_str == 'records':
            return values.records(record_magic(self.cls.API_KEY, self.version))
        default = field.default if tagged else None
        return values.simple(type_str, tagged=tagged, default=default)


# --- kafka.protocol.old: kafka-python's hand-written (2.x style) protocol definitions ----------
#
# A second, independent source: these classes spell every version's layout out by hand in
# Python (Schema/Array/String...) rather than reading Kafka's JSON. Nullability is not
# recorded there, so these cases never hold nulls; flexible versions carry unknown tagged
# fields (raw bytes, written in ascending tag order), which a decoder must keep and re-encode.

LEGACY_SKIP_MODULES = {'abstract', 'api', 'struct', 'types', 'consumer_protocol'}

# Hand-written classes whose layout disagrees with Kafka's schema (kafka-python bugs, checked
# against Kafka's JSON). They are not emitted as golden cases; the script reports each one as
# an "excluded" line so the reader can show them.
LEGACY_KNOWN_BAD = {
    'DescribeAclsRequest_v2': 'reuses the v1 Schema, but v2 is flexible in Kafka (compact strings, tagged fields)',
    'DescribeAclsResponse_v2': 'reuses the v1 Schema, but v2 is flexible in Kafka (compact strings, tagged fields)',
    'DescribeLogDirsRequest_v0': "declares topics[].partitions as Int32, Kafka's schema has []int32",
}


@functools.lru_cache(maxsize=None)
def legacy_classes():
    """Every versioned request and response class of kafka.protocol.old, sorted."""
    Request, Response = old_api.Request, old_api.Response
    found = {}
    for info in pkgutil.iter_modules(kafka.protocol.old.__path__):
        if info.name in LEGACY_SKIP_MODULES:
            continue
        module = importlib.import_module('kafka.protocol.old.' + info.name)
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, (Request, Response))
                    and obj not in (Request, Response)
                    and isinstance(getattr(obj, 'API_KEY', None), int)
                    and isinstance(getattr(obj, 'API_VERSION', None), int)):
                found[(obj.API_KEY, 0 if obj.is_request() else 1, obj.API_VERSION)] = obj
    return tuple(found[k] for k in sorted(found))


class LegacyBuilder:
    """Fills a kafka.protocol.old class by walking its hand-written Schema."""

    UNKNOWN_TAGS = ({}, {90: b'\x01\x02'}, {77: b'', 300: b'unknown \xe2\x9c\x93'})

    def __init__(self, cls, values):
        self.cls = cls
        self.values = values

    def message(self):
        fields = list(self.schema_values(self.cls.SCHEMA))
        kind = 'request' if self.cls.is_request() else 'response'
        for name, value in OVERRIDES.get((self.cls.API_KEY, kind), {}).items():
            if name in self.cls.SCHEMA.names:
                fields[self.cls.SCHEMA.names.index(name)] = value
        return self.cls(*fields)

    def schema_values(self, schema):
        return tuple(self.value(t, name) for name, t in zip(schema.names, schema.fields))

    def value(self, t, name):
        T = old_types
        values = self.values
        kind = t if isinstance(t, type) else type(t)
        if kind is T.Schema:
            return self.schema_values(t)
        if issubclass(kind, T.Array):  # Array and CompactArray
            count = values.array_len() or 2
            return [self.value(t.array_of, name) for _ in range(count)]
        if kind is T.TaggedFields:
            tags = dict(values.pick(self.UNKNOWN_TAGS))
            STATS['unknown tags set (old)'] += len(tags)
            return tags
        if issubclass(kind, T.String):  # String and CompactString
            return values.simple('string')
        if kind in (T.Bytes, T.CompactBytes):
            if name == 'records':
                return record_data(values, record_magic(self.cls.API_KEY, self.cls.API_VERSION))
            return values.simple('bytes')
        simple = {T.Int8: 'int8', T.Int16: 'int16', T.Int32: 'int32', T.Int64: 'int64',
                  T.Float64: 'float64', T.Boolean: 'bool', T.UUID: 'uuid', T.BitField: 'bitfield'}
        if kind in simple:
            return values.simple(simple[kind])
        raise ValueError('%s: unexpected legacy type %r for field %s' % (self.cls.__name__, t, name))


def legacy_case(cls):
    seed = 31337 + cls.API_KEY * 7919 + cls.API_VERSION * 104729 + (0 if cls.is_request() else 15485863)
    return LegacyBuilder(cls, Values(seed)).message()


def generate_legacy(supported):
    cases = []
    for cls in legacy_classes():
        if supported is not None:
            rng = supported.get(str(cls.API_KEY))
            if rng is None or not rng[0] <= cls.API_VERSION <= rng[1]:
                continue
        if cls.__name__ in LEGACY_KNOWN_BAD:
            cases.append({'kind': 'excluded', 'api_key': cls.API_KEY, 'version': cls.API_VERSION,
                          'source': 'kafka.protocol.old', 'name': cls.__name__,
                          'reason': LEGACY_KNOWN_BAD[cls.__name__]})
            continue
        msg = legacy_case(cls)
        cases.append({'kind': 'request' if cls.is_request() else 'response', 'api_key': cls.API_KEY,
                      'version': cls.API_VERSION, 'source': 'kafka.protocol.old',
                      'name': cls.__name__, 'hex': bytes(msg.encode()).hex()})
    return cases


def class_versions(cls, supported):
    """Versions to emit: kafka-python's (it encodes from 0 up) within the reader's range."""
    lo, hi = 0, cls.max_version
    if supported is not None:
        rng = supported.get(str(cls.API_KEY))
        if rng is None:
            return []
        lo, hi = max(lo, rng[0]), min(hi, rng[1])
    return list(range(lo, hi + 1))


# Golden cases per (class, version): differently seeded value sets.
GOLDEN_VARIANTS = (0, 1)


def build_case(cls, version, policy='golden', variant=0):
    """The deterministic value for one (class, version): `golden` (varied values) or
    `minimal` (seed 001's smallest legal instance)."""
    if policy == 'minimal':
        return Builder(cls, version, MinimalValues()).message(overrides=False)
    seed = cls.API_KEY * 7919 + version * 104729 + (0 if cls.is_request() else 15485863)
    return Builder(cls, version, Values(seed + 7 * variant, variant)).message()


def frame_versions(versions, cls):
    """Lowest, first flexible and highest version: enough frames to cover every header version."""
    picks = {versions[0], versions[-1]}
    flex = [v for v in versions if cls.flexible_version_q(v)]
    if flex:
        picks.add(flex[0])
    return sorted(picks)


def generate(supported, policy='golden'):
    cases = []
    for cls in message_classes():
        kind = 'request' if cls.is_request() else 'response'
        versions = class_versions(cls, supported)
        variants = GOLDEN_VARIANTS if policy == 'golden' else (0,)
        for version in versions:
            for variant in variants:
                msg = build_case(cls, version, policy, variant)
                body = msg.encode(version=version)
                cases.append({'kind': kind, 'api_key': cls.API_KEY, 'version': version,
                              'source': 'kafka.protocol', 'variant': variant,
                              'name': cls.__name__, 'hex': bytes(body).hex()})
        for i, version in enumerate(frame_versions(versions, cls) if versions else []):
            msg = build_case(cls, version, policy)
            if cls.is_request():
                client_id = (None, 'kåfka-wire-golden', '')[i % 3]
                msg.with_header(correlation_id=-2147483000 + version * 1000 + cls.API_KEY,
                                client_id=client_id)
            else:
                msg.with_header(correlation_id=2147483000 - version * 1000 - cls.API_KEY)
            frame = msg.encode(header=True)  # version fixed at construction
            cases.append({'kind': kind + '_frame', 'api_key': cls.API_KEY, 'version': version,
                          'source': 'kafka.protocol', 'variant': 0,
                          'name': cls.__name__, 'hex': bytes(frame).hex()})
    if policy == 'golden':
        cases.extend(generate_legacy(supported))
    return cases


def first_difference(got, expected, path, version):
    """Where two decoded values first differ, as `path: got X, expected Y`."""
    if isinstance(expected, DataContainer) and isinstance(got, DataContainer):
        for field in expected._struct._fields:
            if not field.for_version_q(version):
                continue
            a, b = getattr(got, field.name), getattr(expected, field.name)
            if a != b:
                return first_difference(a, b, '%s.%s' % (path, field.name), version)
    elif isinstance(expected, list) and isinstance(got, list) and len(got) == len(expected):
        for i, (a, b) in enumerate(zip(got, expected)):
            if a != b:
                return first_difference(a, b, '%s[%d]' % (path, i), version)
    return '%s: got %s, expected %s' % (path, short(got), short(expected))


def short(value, limit=200):
    text = value.hex() if isinstance(value, (bytes, bytearray)) else repr(value)
    return text if len(text) <= limit else text[:limit] + '...(%d chars)' % len(text)


def check_legacy(case, kind, data):
    """Decodes a body with kafka.protocol.old and compares with legacy_case."""
    matches = [c for c in legacy_classes() if c.API_KEY == case['api_key']
               and c.API_VERSION == case['version'] and c.is_request() == (kind == 'request')]
    if not matches:
        return False, 'kafka.protocol.old has no such class', '?'
    cls = matches[0]
    # The old Structs have no usable value equality (decode drops empty tags, nested arrays
    # break to_object), so values are compared through kafka-python's own encoding: the
    # bytes must be exactly what it writes for this case's value, and decode to a value
    # that it writes back the same way.
    try:
        expected = bytes(legacy_case(cls).encode())
        if data != expected:
            return False, 'bytes are not the encoding of this case\'s value: got %s, expected %s' % (
                data.hex(), expected.hex()), cls.__name__
        decoded = cls.decode(io.BytesIO(data))
        again = bytes(decoded.encode())
        if again != data:
            return False, 're-encoded bytes differ: got %s, expected %s' % (again.hex(), data.hex()), cls.__name__
    except Exception as exc:  # report every failure, keep going
        return False, 'decode failed: %s: %s' % (type(exc).__name__, exc), cls.__name__
    return True, None, cls.__name__


def check_decode(lines, policy):
    """Decodes foreign-encoded bytes with kafka-python and compares with the values this
    script builds for each case under `policy`."""
    classes = {(c.API_KEY, 'request' if c.is_request() else 'response'): c for c in message_classes()}
    failures = 0
    total = 0
    for line in lines:
        line = line.strip()
        if not line:
            continue
        case = json.loads(line)
        if case['kind'] == 'excluded':
            continue
        total += 1
        kind = case['kind']
        framed = kind.endswith('_frame')
        base_kind = kind[:-len('_frame')] if framed else kind
        version = case['version']
        data = bytes.fromhex(case['hex'])
        if case.get('source') == 'kafka.protocol.old':
            ok, detail, name = check_legacy(case, base_kind, data)
            failures += 0 if ok else 1
            print(json.dumps({'ok': ok, 'kind': kind, 'api_key': case['api_key'], 'version': version,
                              'name': name, 'detail': detail}, ensure_ascii=False))
            continue
        cls = classes[(case['api_key'], base_kind)]
        detail = None
        try:
            expected = build_case(cls, version, policy, case.get('variant', 0))
            if framed:
                decoded = cls.decode(data, version=version, header=True)
            else:
                decoded = cls.decode(data, version=version)
            if not framed:
                decoded._header = None  # decode leaves the slot unset; encode reads it
            # kafka-python's decode does not report the bytes it consumed: re-encoding and
            # comparing with the input also checks that nothing was left over.
            again = decoded.encode(header=framed)
            if decoded != expected:
                detail = 'decoded value differs: %s' % first_difference(decoded, expected, cls.__name__, version)
            elif bytes(again) != data:
                detail = 're-encoded bytes differ: got %s, expected %s' % (bytes(again).hex(), data.hex())
        except Exception as exc:  # report every failure, keep going
            detail = 'decode failed: %s: %s' % (type(exc).__name__, exc)
        ok = detail is None
        failures += 0 if ok else 1
        print(json.dumps({'ok': ok, 'kind': kind, 'api_key': case['api_key'], 'version': version,
                          'name': cls.__name__, 'detail': detail}, ensure_ascii=False))
    print(json.dumps({'summary': True, 'total': total, 'failures': failures}))
    return failures == 0


def main(argv):
    mode = 'encode'
    supported = None
    policy = 'golden'
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ('encode', 'decode'):
            mode = arg
        elif arg == '--supported':
            supported = json.loads(args.pop(0))
        elif arg == '--values':
            policy = args.pop(0)
            if policy not in ('golden', 'minimal'):
                print('--values takes golden or minimal', file=sys.stderr)
                return 2
        elif arg in ('-h', '--help'):
            print(__doc__)
            return 0
        else:
            print('unknown argument: %s' % arg, file=sys.stderr)
            return 2
    if mode == 'decode':
        return 0 if check_decode(sys.stdin, policy) else 1
    out = sys.stdout
    for case in generate(supported, policy):
        out.write(json.dumps(case, ensure_ascii=False))
        out.write('\n')
    sys.stderr.write('kafka-python %s: %s\n' % (kafka.__version__, json.dumps(STATS)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
