//! The second decoder: walks a message's bytes with the IR at run time (no generated code),
//! building the object tree and the message's Kafka-style JSON as generated `to_json` writes it.

use std::collections::{HashMap, HashSet};

use kwire_runtime::json::{put_unknown_tags, Json};
use kwire_runtime::{Bytes, UnknownTags, Uuid};
use serde_json::{Map, Value};

use super::node::{Node, Region};
use super::records::{explain_records, DECOMPRESSION_BUDGET};
use super::tree::{bytes_preview, hex_preview, quoted, Fail, Tree, MAX_ARRAY_ELEMENTS};
use kwire_codegen::ir::json_key;
use kwire_codegen::ir::{min_value_size, DefaultValue, Field, FieldType, Layout, Message, Presence, Slot, Struct};
pub use kwire_codegen::validate::type_name;

/// How the walk words what it sees.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// The bytes are the smallest legal instance (`--sample`): arrays hold one sample element.
    pub sample: bool,
}

/// A message body walked: its node (`Name struct`), its JSON, and the bytes it used; or where
/// it failed, with the tree up to there.
pub struct Body {
    pub node: Node,
    pub json: Result<Value, Fail>,
    pub consumed: usize,
}

/// Walks the body of `msg` at `version` from the start of `data`; `base` is the offset of
/// `data[0]` in the input shown.
pub fn explain_body(msg: &Message, version: i16, data: &[u8], base: usize, style: Style) -> Body {
    let mut walk = Walk::new(msg, version, Tree::new(data, base, false, Region::Body), style);
    walk.tree.open(&msg.name, "struct", Some(format!("message body, version {version}")));
    walk.tree.path.push(msg.name.clone());
    let depth = walk.tree.depth();
    let result = if msg.valid_versions.contains(version) {
        walk.read_fields(&msg.fields).map(Value::Object)
    } else {
        Err(walk.tree.fail(format!("version {version} is not valid (valid {})", msg.valid_versions)))
    };
    let node = match &result {
        Ok(_) => walk.tree.close(None),
        Err(fail) => walk.tree.unwind(fail, depth - 1),
    };
    Body { node: node.expect("the body is the root"), json: result, consumed: walk.tree.pos }
}

pub(super) struct Walk<'a> {
    msg: &'a Message,
    structs: HashMap<&'a str, &'a Struct>,
    version: i16,
    pub(super) tree: Tree<'a>,
    style: Style,
    /// What the message's record data may still decompress to.
    budget: usize,
}

/// How a length prefix was written, for the value text.
fn length_note(compact: bool, wide: bool, raw: i64) -> String {
    match (compact, wide) {
        (true, _) => format!("compact, len+1={raw}"),
        (false, true) => format!("int32 len={raw}"),
        (false, false) => format!("int16 len={raw}"),
    }
}

/// A value's JSON by the runtime's own converters (those of generated `to_json`), so the two
/// decoders' JSON can only differ where their decoding does. Field values never fail to convert.
fn json_of<T: Json>(value: &T) -> Value {
    value.to_json(0).unwrap_or(Value::Null)
}

impl<'a> Walk<'a> {
    pub(super) fn new(msg: &'a Message, version: i16, tree: Tree<'a>, style: Style) -> Self {
        let structs = msg.structs.iter().map(|s| (s.name.as_str(), s)).collect();
        Walk { msg, structs, version, tree, style, budget: DECOMPRESSION_BUDGET }
    }

    /// The fields of one struct, then (at flexible versions) its tagged section.
    pub(super) fn read_fields(&mut self, fields: &'a [Field]) -> Result<Map<String, Value>, Fail> {
        let layout = Layout::of(self.msg, fields, self.version);
        let mut json: Vec<Option<Value>> = vec![None; fields.len()];
        for slot in layout.regular() {
            json[slot.index] = Some(self.read_field(slot, false)?);
        }
        let mut unknown = UnknownTags::new();
        if layout.flexible {
            self.read_tag_section(&layout, &mut json, &mut unknown)?;
        }
        let mut map = Map::new();
        for (f, value) in fields.iter().zip(json) {
            if let Some(value) = value {
                map.insert(json_key(&f.name), value);
            }
        }
        put_unknown_tags(&mut map, &unknown);
        Ok(map)
    }

    fn read_tag_section(
        &mut self,
        layout: &Layout<'a>,
        json: &mut [Option<Value>],
        unknown: &mut UnknownTags,
    ) -> Result<(), Fail> {
        let about = "number of tagged fields in this struct";
        let region = std::mem::replace(&mut self.tree.region, Region::TaggedFields);
        self.tree.open("tagged_fields", "uvarint", Some(about.to_string()));
        let count = self.tree.tag_count()?;
        let mut seen = HashSet::new();
        for _ in 0..count {
            let tag = self.tree.leaf_with("tag", "uvarint", None, Tree::uvarint, |t| t.to_string())?;
            // A field of this struct tagged `tag` at some version, and its slot at this one.
            let known = layout.slots.iter().find(|s| s.field.tag == Some(tag) && s.field.tagged_range().is_some());
            let size = self.tree.leaf_with(
                "size",
                "uvarint",
                Some("bytes of the tagged value".into()),
                Tree::uvarint,
                |s| s.to_string(),
            )? as usize;
            if size > self.tree.remaining() {
                return Err(self
                    .tree
                    .fail(format!("tagged field {tag} declares {size} bytes, {} left", self.tree.remaining())));
            }
            if !seen.insert(tag) {
                return Err(self.tree.fail(format!("tag {tag} appears twice")));
            }
            match known {
                Some(slot) if slot.presence == Presence::Tagged(tag) => {
                    let saved_end = self.tree.end;
                    self.tree.end = self.tree.pos + size;
                    let value = self.read_field(slot, true)?;
                    if self.tree.pos != self.tree.end {
                        let used = size - self.tree.remaining();
                        return Err(self
                            .tree
                            .fail(format!("tagged field {tag} declared {size} bytes but used {used}")));
                    }
                    self.tree.end = saved_end;
                    json[slot.index] = (!self.is_default(slot.field, &value)).then_some(value);
                }
                Some(slot) => {
                    return Err(self.tree.fail(format!(
                        "tag {tag} ({}) is not a tagged field at version {}",
                        slot.field.name, self.version
                    )));
                }
                None => {
                    let start = self.tree.pos;
                    let data = Bytes::copy_from_slice(self.tree.take(size)?);
                    let about = Some("not in this schema; kept as raw bytes".to_string());
                    self.tree.leaf(start, format!("unknown tag {tag}"), "bytes", hex_preview(&data, 32), about);
                    unknown.insert(tag, data);
                }
            }
        }
        self.tree.close(Some(count.to_string()));
        self.tree.region = region;
        Ok(())
    }

    fn read_field(&mut self, slot: &Slot<'a>, tagged: bool) -> Result<Value, Fail> {
        let f = slot.field;
        self.tree.path.push(f.name.clone());
        let value = self.read_value(&f.name, &f.ty, slot.nullable, slot.compact, tagged, f.about.clone())?;
        self.tree.path.pop();
        Ok(value)
    }

    /// The error-code name after a non-zero `…ErrorCode` value.
    fn int_note(label: &str, ty: &FieldType, n: i64) -> String {
        if *ty == FieldType::Int16 && label.ends_with("ErrorCode") && n != 0 {
            format!("{n} ({})", kwire_runtime::ErrorCode(n as i16).name().unwrap_or("unknown error code"))
        } else {
            n.to_string()
        }
    }

    pub(super) fn read_value(
        &mut self,
        label: &str,
        ty: &'a FieldType,
        nullable: bool,
        compact: bool,
        tagged: bool,
        about: Option<String>,
    ) -> Result<Value, Fail> {
        let t = type_name(ty);
        let start = self.tree.pos;
        match ty {
            FieldType::Bool => {
                // Any non-zero byte is true, as Kafka reads it.
                let b = self.tree.i8()?;
                let shown = match b {
                    0 => "false".to_string(),
                    1 => "true".to_string(),
                    other => format!("true (byte {other})"),
                };
                self.tree.leaf(start, label, &t, shown, about);
                Ok(Value::Bool(b != 0))
            }
            FieldType::Float64 => {
                let f = f64::from_bits(u64::from_be_bytes(self.tree.array()?));
                self.tree.leaf(start, label, &t, f.to_string(), about);
                Ok(json_of(&f))
            }
            FieldType::Uuid => {
                let raw: [u8; 16] = self.tree.array()?;
                let uuid = Uuid::from_bytes(raw);
                self.tree.leaf(start, label, &t, uuid.hyphenated().to_string(), about);
                Ok(json_of(&uuid))
            }
            FieldType::String => {
                let (len, raw) = self.length(compact, false, nullable)?;
                let Some(len) = len else {
                    self.tree.leaf(start, label, &t, format!("null ({})", length_note(compact, false, raw)), about);
                    return Ok(Value::Null);
                };
                let bytes = self.tree.take(len)?;
                let text = std::str::from_utf8(bytes).map_err(|e| self.tree.fail(format!("not UTF-8: {e}")))?;
                let shown = format!("{} ({})", quoted(text), length_note(compact, false, raw));
                self.tree.leaf(start, label, &t, shown, about);
                Ok(Value::from(text))
            }
            FieldType::Bytes => {
                let (len, raw) = self.length(compact, true, nullable)?;
                let Some(len) = len else {
                    self.tree.leaf(start, label, &t, format!("null ({})", length_note(compact, true, raw)), about);
                    return Ok(Value::Null);
                };
                let bytes = self.tree.take(len)?;
                let shown = format!("{} ({})", bytes_preview(bytes), length_note(compact, true, raw));
                let json = json_of(&Bytes::copy_from_slice(bytes));
                self.tree.leaf(start, label, &t, shown, about);
                Ok(json)
            }
            FieldType::Records => self.read_records(label, nullable, compact, about),
            FieldType::Struct(name) => {
                self.tree.open(label, name.as_str(), about);
                if nullable {
                    let present = if tagged {
                        self.tree.leaf_with("marker", "uvarint", None, Tree::uvarint, |m| m.to_string())? as i32 > 0
                    } else {
                        let m = self.tree.leaf_with("marker", "int8", None, Tree::i8, |m| m.to_string())?;
                        match m {
                            -1 => false,
                            1 => true,
                            other => return Err(self.tree.fail(format!("struct marker {other} is neither 1 nor -1"))),
                        }
                    };
                    if !present {
                        self.tree.close(Some("null".into()));
                        return Ok(Value::Null);
                    }
                }
                let s = self.lookup(name)?;
                let map = self.read_fields(&s.fields)?;
                self.tree.close(Some("struct".into()));
                Ok(Value::Object(map))
            }
            FieldType::Array(inner) => {
                self.tree.open(label, t.as_str(), about);
                let min = min_value_size(self.msg, inner, compact, self.version);
                let len = self.array_length(compact, nullable, min)?;
                let Some(n) = len else {
                    self.tree.close(Some("null".into()));
                    return Ok(Value::Null);
                };
                let elem_label = inner.struct_name().map_or_else(|| type_name(inner), str::to_string);
                let mut items = Vec::new();
                for i in 0..n {
                    self.tree.path.push(format!("[{i}]"));
                    items.push(self.read_value(&format!("{elem_label}[{i}]"), inner, false, compact, false, None)?);
                    self.tree.path.pop();
                }
                self.tree.close(Some(if n == 1 { "1 element".into() } else { format!("{n} elements") }));
                Ok(Value::Array(items))
            }
            // The integer types.
            _ => {
                let n = self.read_int(ty)?;
                self.tree.leaf(start, label, &t, Self::int_note(label, ty, n), about);
                Ok(Value::from(n))
            }
        }
    }

    fn read_int(&mut self, ty: &FieldType) -> Result<i64, Fail> {
        Ok(match ty {
            FieldType::Int8 => self.tree.i8()?.into(),
            FieldType::Int16 => self.tree.i16()?.into(),
            FieldType::Uint16 => u16::from_be_bytes(self.tree.array()?).into(),
            FieldType::Int32 => self.tree.i32()?.into(),
            FieldType::Uint32 => u32::from_be_bytes(self.tree.array()?).into(),
            _ => self.tree.i64()?,
        })
    }

    fn lookup(&self, name: &str) -> Result<&'a Struct, Fail> {
        self.structs.get(name).copied().ok_or_else(|| self.tree.fail(format!("struct {name} is not defined")))
    }

    /// A string or bytes length: `(Some(len) or None for null, the raw prefix)`.
    fn length(&mut self, compact: bool, wide: bool, nullable: bool) -> Result<(Option<usize>, i64), Fail> {
        let start = self.tree.pos;
        let raw: i64 = if compact {
            i64::from(self.tree.uvarint()?)
        } else if wide {
            i64::from(self.tree.i32()?)
        } else {
            i64::from(self.tree.i16()?)
        };
        let len = if compact { raw - 1 } else { raw };
        if len == -1 {
            return if nullable {
                Ok((None, raw))
            } else {
                Err(self.tree.fail_at(start, "null, and not nullable at this version"))
            };
        }
        if len < -1 {
            return Err(self.tree.fail_at(start, format!("invalid length {len}")));
        }
        if len as u64 > self.tree.remaining() as u64 {
            return Err(self
                .tree
                .fail_at(start, format!("length {len} exceeds the {} bytes left", self.tree.remaining())));
        }
        Ok((Some(len as usize), raw))
    }

    /// An array's length node (`length int32 = 1` or `length uvarint = 2 (compact, n+1)`).
    fn array_length(&mut self, compact: bool, nullable: bool, min: usize) -> Result<Option<usize>, Fail> {
        let start = self.tree.pos;
        let (raw, ty) =
            if compact { (i64::from(self.tree.uvarint()?), "uvarint") } else { (i64::from(self.tree.i32()?), "int32") };
        let n = if compact { raw - 1 } else { raw };
        let (shown, about) = match n {
            -1 if compact => (format!("{raw} (compact, null)"), "null array".to_string()),
            -1 => (format!("{raw} (null)"), "null array".to_string()),
            _ => {
                let shown = if compact { format!("{raw} (compact, n+1)") } else { raw.to_string() };
                let about = match (n, self.style.sample) {
                    (1, true) => "one sample element follows".to_string(),
                    (1, false) => "one element follows".to_string(),
                    (0, _) => "no elements follow".to_string(),
                    (n, _) => format!("{n} elements follow"),
                };
                (shown, about)
            }
        };
        if n == -1 {
            if !nullable {
                return Err(self.tree.fail_at(start, "null array, and not nullable at this version"));
            }
            self.tree.leaf(start, "length", ty, shown, Some(about));
            return Ok(None);
        }
        if n < -1 {
            return Err(self.tree.fail_at(start, format!("invalid array length {n}")));
        }
        if n as u64 > MAX_ARRAY_ELEMENTS as u64 {
            return Err(self.tree.fail_at(start, format!("{n} elements, more than the {MAX_ARRAY_ELEMENTS} allowed")));
        }
        if (n as u64).saturating_mul(min.max(1) as u64) > self.tree.remaining() as u64 {
            return Err(self
                .tree
                .fail_at(start, format!("{n} elements cannot fit in the {} bytes left", self.tree.remaining())));
        }
        self.tree.leaf(start, "length", ty, shown, Some(about));
        Ok(Some(n as usize))
    }

    fn read_records(
        &mut self,
        label: &str,
        nullable: bool,
        compact: bool,
        about: Option<String>,
    ) -> Result<Value, Fail> {
        self.tree.open(label, "records", about);
        let start = self.tree.pos;
        let (len, raw) = self.length(compact, true, nullable)?;
        let shown = if compact { format!("{raw} (compact, len+1)") } else { raw.to_string() };
        let Some(len) = len else {
            self.tree.leaf(
                start,
                "length",
                if compact { "uvarint" } else { "int32" },
                shown,
                Some("null records".into()),
            );
            self.tree.close(Some("null".into()));
            return Ok(Value::Null);
        };
        let what = format!("{len} bytes of record data follow");
        self.tree.leaf(start, "length", if compact { "uvarint" } else { "int32" }, shown, Some(what));
        let at = self.tree.offset();
        let data = self.tree.take(len)?;
        let (nodes, batches) = explain_records(data, at, false, &mut self.budget);
        self.tree.adopt(nodes);
        let value = match batches {
            1 => "1 batch".to_string(),
            n => format!("{n} batches"),
        };
        self.tree.close(Some(value));
        Ok(json_of(&Bytes::copy_from_slice(data)))
    }

    /// Whether a field's value is its default (a tagged field at its default is not written
    /// to JSON, as generated `to_json` leaves it out).
    fn is_default(&self, f: &Field, value: &Value) -> bool {
        match (&f.ty, &f.default, value) {
            // Compared as numbers, as the generated `!=` on `f64` does (-0.0 is 0.0).
            (FieldType::Float64, DefaultValue::Float(d), Value::Number(n)) => n.as_f64() == Some(*d),
            (FieldType::Float64, DefaultValue::Implicit, Value::Number(n)) => n.as_f64() == Some(0.0),
            _ => *value == self.default_json(f),
        }
    }

    /// A field's default, as JSON at this version.
    fn default_json(&self, f: &Field) -> Value {
        let option = f.nullable_versions.is_some() || f.default == DefaultValue::Null;
        match (&f.default, &f.ty) {
            (DefaultValue::Null, _) => Value::Null,
            (DefaultValue::Implicit, FieldType::Records) if option => Value::Null,
            (DefaultValue::Bool(b), _) => Value::Bool(*b),
            (DefaultValue::Int(n), _) => Value::from(*n),
            (DefaultValue::Float(x), _) => json_of(x),
            (DefaultValue::Str(s), _) => Value::from(s.as_str()),
            (DefaultValue::Uuid(raw), _) => json_of(&Uuid::from_bytes(*raw)),
            (DefaultValue::Implicit, ty) => self.implicit_json(ty),
        }
    }

    fn implicit_json(&self, ty: &FieldType) -> Value {
        match ty {
            FieldType::Bool => Value::Bool(false),
            FieldType::Float64 => json_of(&0.0f64),
            FieldType::String | FieldType::Bytes | FieldType::Records => Value::from(""),
            FieldType::Uuid => json_of(&Uuid::nil()),
            FieldType::Array(_) => Value::Array(Vec::new()),
            FieldType::Struct(name) => {
                let mut map = Map::new();
                if let Some(s) = self.structs.get(name.as_str()) {
                    for slot in Layout::of(self.msg, &s.fields, self.version).regular() {
                        map.insert(json_key(&slot.field.name), self.default_json(slot.field));
                    }
                }
                Value::Object(map)
            }
            _ => Value::from(0),
        }
    }
}
