//! An independent encoder that writes sample instances of a schema straight from the IR,
//! without the generated code: the oracle the generated decoders and encoders are checked
//! against.
//!
//! `Minimal` is the smallest legal instance as seed 001 defines it (numbers zero, strings and
//! bytes empty, every array with exactly one element, records one empty 61-byte RecordBatch
//! v2). `Random` fills fields with random values, nulls, array lengths, known tagged fields
//! (tagged structs included, null or present) and unknown tags, always in the canonical form
//! Kafka writes (tags ascending, known tags only when not default), so that re-encoding a
//! decoded value must reproduce the bytes exactly. `Defaults` writes every field at its
//! default, which is how a tagged struct is known to differ from its default. `Maximal` sets
//! everything: no nulls, every known tagged field at a value that is not its default, two
//! elements in every array, numbers at their type's maximum, and two unknown tags in every
//! flexible struct.

use std::collections::HashMap;

use kwire_codegen::ir::{in_versions, DefaultValue, Field, FieldType, Layout, Message, Presence, Slot, Struct};
use kwire_runtime::wire::put_uvarlong_into;

/// Which instance to write.
pub enum Mode {
    Minimal,
    Random(Rng),
    Defaults,
    Maximal,
}

/// A small deterministic generator (xorshift64*), seeded by the property tests.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// Writes an instance of `msg` at `version`.
pub fn encode(msg: &Message, version: i16, mode: Mode) -> Vec<u8> {
    encode_counted(msg, version, mode).0
}

/// What an instance holds that the coverage tests count.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Tagged struct fields written present.
    pub tagged_structs_present: usize,
    /// Tagged nullable struct fields written null (marker 0).
    pub tagged_structs_null: usize,
}

/// `encode`, also counting what was written.
pub fn encode_counted(msg: &Message, version: i16, mode: Mode) -> (Vec<u8>, Written) {
    let structs = msg.structs.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut w = Writer { msg, structs, mode, version, out: Vec::new(), written: Written::default() };
    let fields = msg.fields.clone();
    w.write_struct(&fields);
    (w.out, w.written)
}

/// The tagged struct fields of `msg` at `version` (in the message or any struct that exists
/// then): `(field name, whether null may be written)`; null may be written where the field is
/// nullable and its default is not null.
pub fn tagged_struct_fields(msg: &Message, version: i16) -> Vec<(String, bool)> {
    let in_structs = msg.structs.iter().filter(|s| s.versions.contains(version)).flat_map(|s| s.fields.iter());
    msg.fields
        .iter()
        .chain(in_structs)
        .filter(|f| matches!(f.ty, FieldType::Struct(_)) && in_versions(f.tagged_range(), version))
        .map(|f| (f.name.clone(), in_versions(f.nullable_versions, version) && f.default != DefaultValue::Null))
        .collect()
}

struct Writer<'a> {
    msg: &'a Message,
    structs: HashMap<&'a str, &'a Struct>,
    mode: Mode,
    version: i16,
    out: Vec<u8>,
    written: Written,
}

/// The 61-byte empty RecordBatch v2 of seed 001 (all numbers zero, CRC-32C filled in).
pub fn empty_record_batch() -> Vec<u8> {
    let mut b = Vec::with_capacity(61);
    b.extend_from_slice(&0i64.to_be_bytes()); // base offset
    b.extend_from_slice(&49i32.to_be_bytes()); // batch length: bytes after this field
    b.extend_from_slice(&0i32.to_be_bytes()); // partition leader epoch
    b.push(2); // magic
    b.extend_from_slice(&[0; 4]); // crc, filled below
    b.extend_from_slice(&[0; 2 + 4 + 8 + 8 + 8 + 2 + 4]); // attributes .. base sequence
    b.extend_from_slice(&0i32.to_be_bytes()); // record count
    debug_assert_eq!(b.len(), 61);
    let crc = kwire_records::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

impl Writer<'_> {
    fn random(&mut self) -> Option<&mut Rng> {
        match &mut self.mode {
            Mode::Minimal | Mode::Defaults | Mode::Maximal => None,
            Mode::Random(rng) => Some(rng),
        }
    }

    fn defaults(&self) -> bool {
        matches!(self.mode, Mode::Defaults)
    }

    fn maximal(&self) -> bool {
        matches!(self.mode, Mode::Maximal)
    }

    /// The bytes of struct `name` with every field at its default (and no tagged fields).
    fn default_struct(&self, name: &str) -> Vec<u8> {
        let structs = self.structs.clone();
        let mut w = Writer {
            msg: self.msg,
            structs,
            mode: Mode::Defaults,
            version: self.version,
            out: Vec::new(),
            written: Written::default(),
        };
        let fields = self.structs[name].fields.clone();
        w.write_struct(&fields);
        w.out
    }

    fn write_struct(&mut self, fields: &[Field]) {
        let layout = Layout::of(self.msg, fields, self.version);
        let mut tagged: Vec<(u32, Vec<u8>)> = Vec::new();
        // Schema order, tagged fields included, so a seed draws its random values in one order.
        for slot in &layout.slots {
            match slot.presence {
                Presence::Absent => {}
                Presence::Regular => self.write_field(&slot.field.ty, slot.nullable, slot.compact, &slot.field.default),
                Presence::Tagged(tag) => {
                    if let Some(bytes) = self.tagged_value(slot) {
                        tagged.push((tag, bytes));
                    }
                }
            }
        }
        if !layout.flexible {
            return;
        }
        // Unknown tags, numbered so they never collide with a known one.
        let known: Vec<u32> = fields.iter().filter_map(|f| f.tag).collect();
        if self.maximal() {
            let free = (20u32..).filter(|tag| !known.contains(tag));
            tagged.extend(free.take(2).zip([vec![0xca, 0xfe], Vec::new()]));
        }
        if let Some(rng) = self.random() {
            let extra = rng.below(3);
            for _ in 0..extra {
                let tag = 20 + rng.below(200) as u32;
                if known.contains(&tag) || tagged.iter().any(|(t, _)| *t == tag) {
                    continue;
                }
                let len = rng.below(6) as usize;
                let value = (0..len).map(|_| rng.next_u64() as u8).collect();
                tagged.push((tag, value));
            }
        }
        tagged.sort_by_key(|(t, _)| *t);
        put_uvarlong_into(&mut self.out, tagged.len() as u64);
        for (tag, value) in tagged {
            put_uvarlong_into(&mut self.out, u64::from(tag));
            put_uvarlong_into(&mut self.out, value.len() as u64);
            self.out.extend_from_slice(&value);
        }
    }

    /// A known tagged field's value bytes, or `None` to leave it out. Only values that are
    /// certainly not the default are written (Kafka omits default tagged values).
    fn tagged_value(&mut self, slot: &Slot<'_>) -> Option<Vec<u8>> {
        let f = slot.field;
        if matches!(self.mode, Mode::Minimal | Mode::Defaults) {
            return None;
        }
        let include = self.maximal() || self.random().is_some_and(|rng| rng.chance(1, 2));
        if !include {
            return None;
        }
        let (nullable, compact) = (slot.nullable, slot.compact);
        let saved = std::mem::take(&mut self.out);
        let ok = match (&f.ty, &f.default) {
            // Inside a tagged field a nullable struct's marker is an unsigned varint: 1 present,
            // 0 null. Null is written only where it is not the default; a present struct only
            // when it differs from the default instance.
            (FieldType::Struct(name), default) => {
                let null_default = matches!(default, DefaultValue::Null);
                let null = nullable && !null_default && self.random().is_some_and(|rng| rng.chance(1, 3));
                if null {
                    self.out.push(0);
                    self.written.tagged_structs_null += 1;
                    true
                } else {
                    if nullable {
                        self.out.push(1);
                    }
                    let start = self.out.len();
                    let fields = self.structs[name.as_str()].fields.clone();
                    self.write_struct(&fields);
                    let differs = null_default || self.out[start..] != self.default_struct(name)[..];
                    self.written.tagged_structs_present += usize::from(differs);
                    differs
                }
            }
            (FieldType::Array(_), _) => {
                self.write_array(&f.ty, false, compact, true);
                true
            }
            (FieldType::String, DefaultValue::Str(d)) => {
                let s = format!("{d}x");
                self.put_string(&s, compact);
                true
            }
            (FieldType::String, _) => {
                self.put_string("tagged", compact);
                true
            }
            (FieldType::Bytes, _) => {
                put_compact_len(&mut self.out, 3, compact, true);
                self.out.extend_from_slice(&[1, 2, 3]);
                true
            }
            (FieldType::Bool, d) => {
                let default = matches!(d, DefaultValue::Bool(true));
                self.out.push(u8::from(!default));
                true
            }
            (FieldType::Uuid, _) => {
                self.out.extend_from_slice(&[0x5a; 16]);
                true
            }
            (ty, d) => {
                let default = match d {
                    DefaultValue::Int(n) => *n,
                    _ => 0,
                };
                let value = if default == 7 { 8 } else { 7 };
                self.put_int(ty, value)
            }
        };
        let value = std::mem::replace(&mut self.out, saved);
        ok.then_some(value)
    }

    fn put_int(&mut self, ty: &FieldType, v: i64) -> bool {
        match ty {
            FieldType::Int8 => self.out.push(v as u8),
            FieldType::Int16 | FieldType::Uint16 => self.out.extend_from_slice(&(v as u16).to_be_bytes()),
            FieldType::Int32 | FieldType::Uint32 => self.out.extend_from_slice(&(v as u32).to_be_bytes()),
            FieldType::Int64 => self.out.extend_from_slice(&v.to_be_bytes()),
            FieldType::Float64 => self.out.extend_from_slice(&(v as f64).to_bits().to_be_bytes()),
            _ => return false,
        }
        true
    }

    fn put_string(&mut self, s: &str, compact: bool) {
        put_compact_len(&mut self.out, s.len(), compact, false);
        self.out.extend_from_slice(s.as_bytes());
    }

    fn write_field(&mut self, ty: &FieldType, nullable: bool, compact: bool, default: &DefaultValue) {
        let null = nullable
            && match self.mode {
                Mode::Defaults => {
                    matches!(default, DefaultValue::Null)
                        || (*ty == FieldType::Records && matches!(default, DefaultValue::Implicit))
                }
                _ => self.random().is_some_and(|rng| rng.chance(1, 5)),
            };
        if self.defaults() {
            match (ty, default) {
                (FieldType::Bool, DefaultValue::Bool(b)) => return self.out.push(u8::from(*b)),
                (FieldType::Float64, DefaultValue::Float(f)) => {
                    return self.out.extend_from_slice(&f.to_bits().to_be_bytes());
                }
                (FieldType::Uuid, DefaultValue::Uuid(raw)) => return self.out.extend_from_slice(raw),
                (FieldType::String, DefaultValue::Str(text)) if !null => return self.put_string(text, compact),
                (FieldType::Records, _) if !null => return put_compact_len(&mut self.out, 0, compact, true),
                (FieldType::Array(_), _) if !null => return put_compact_len(&mut self.out, 0, compact, true),
                (ty, DefaultValue::Int(n)) => {
                    self.put_int(ty, *n);
                    return;
                }
                _ => {}
            }
        }
        match ty {
            FieldType::Bool => {
                let maximal = self.maximal();
                let b = self.random().map_or(u8::from(maximal), |rng| rng.below(2) as u8);
                self.out.push(b);
            }
            FieldType::Int8
            | FieldType::Int16
            | FieldType::Uint16
            | FieldType::Int32
            | FieldType::Uint32
            | FieldType::Int64 => {
                let maximal = self.maximal();
                let v = match self.random() {
                    Some(rng) => rng.next_u64() as i64,
                    None if maximal => max_of(ty),
                    None => 0,
                };
                self.put_int(ty, v);
            }
            FieldType::Float64 => {
                let maximal = if self.maximal() { f64::MAX.to_bits() } else { 0 };
                let bits = self.random().map_or(maximal, |rng| {
                    let f = (rng.next_u64() as i64 as f64) / 1000.0;
                    f.to_bits()
                });
                self.out.extend_from_slice(&bits.to_be_bytes());
            }
            FieldType::Uuid => {
                let maximal = self.maximal();
                let raw: Vec<u8> = match self.random() {
                    Some(rng) => (0..16).map(|_| rng.next_u64() as u8).collect(),
                    None if maximal => vec![0xff; 16],
                    None => vec![0; 16],
                };
                self.out.extend_from_slice(&raw);
            }
            FieldType::String => {
                if null {
                    put_null(&mut self.out, compact, false);
                    return;
                }
                let maximal = self.maximal();
                let s = match self.random() {
                    Some(rng) => {
                        let pool = ["", "a", "topic-1", "ünïcødé", "🚀", "__consumer_offsets"];
                        pool[rng.below(pool.len() as u64) as usize].to_string()
                    }
                    None if maximal => "maximal-ünïcødé-🚀".to_string(),
                    None => String::new(),
                };
                self.put_string(&s, compact);
            }
            FieldType::Bytes => {
                if null {
                    put_null(&mut self.out, compact, true);
                    return;
                }
                let maximal = self.maximal();
                let b: Vec<u8> = match self.random() {
                    Some(rng) => {
                        let n = rng.below(9) as usize;
                        (0..n).map(|_| rng.next_u64() as u8).collect()
                    }
                    None if maximal => vec![0xff, 0x00, 0x80],
                    None => Vec::new(),
                };
                put_compact_len(&mut self.out, b.len(), compact, true);
                self.out.extend_from_slice(&b);
            }
            FieldType::Records => {
                if null {
                    put_null(&mut self.out, compact, true);
                    return;
                }
                let batch = empty_record_batch();
                put_compact_len(&mut self.out, batch.len(), compact, true);
                self.out.extend_from_slice(&batch);
            }
            FieldType::Struct(name) => {
                if nullable {
                    if null {
                        self.out.push(0xff);
                        return;
                    }
                    self.out.push(1);
                }
                let fields = self.structs[name.as_str()].fields.clone();
                self.write_struct(&fields);
            }
            FieldType::Array(_) => self.write_array(ty, null, compact, false),
        }
    }

    fn write_array(&mut self, ty: &FieldType, null: bool, compact: bool, non_empty: bool) {
        let FieldType::Array(inner) = ty else { return };
        if null {
            put_null(&mut self.out, compact, true);
            return;
        }
        let maximal = self.maximal();
        let n = match self.random() {
            Some(rng) => rng.below(4) as usize + usize::from(non_empty),
            None if maximal => 2,
            None => 1,
        };
        put_compact_len(&mut self.out, n, compact, true);
        for _ in 0..n {
            self.write_field(inner, false, compact, &DefaultValue::Implicit);
        }
    }
}

/// The largest value of an integer type, as the bits `put_int` writes.
fn max_of(ty: &FieldType) -> i64 {
    match ty {
        FieldType::Int8 => i8::MAX.into(),
        FieldType::Int16 => i16::MAX.into(),
        FieldType::Uint16 => u16::MAX.into(),
        FieldType::Int32 => i32::MAX.into(),
        FieldType::Uint32 => u32::MAX.into(),
        _ => i64::MAX,
    }
}

fn put_compact_len(out: &mut Vec<u8>, n: usize, compact: bool, wide: bool) {
    if compact {
        put_uvarlong_into(out, n as u64 + 1);
    } else if wide {
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.extend_from_slice(&(n as i16).to_be_bytes());
    }
}

fn put_null(out: &mut Vec<u8>, compact: bool, wide: bool) {
    if compact {
        out.push(0);
    } else if wide {
        out.extend_from_slice(&(-1i32).to_be_bytes());
    } else {
        out.extend_from_slice(&(-1i16).to_be_bytes());
    }
}
