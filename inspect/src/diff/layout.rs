//! The wire layout of one version of a schema, from the IR: every element the encoder writes,
//! in order, with its wire form (compact or classic, nullable, presence markers), nested
//! structs recursively, and each struct's tagged fields by tag with their defaults (the
//! default decides what is written). Two versions with equal layouts encode every value alike.

use std::collections::BTreeMap;

use kwire_codegen::ir::{DefaultValue, Field, FieldType, Layout, Message, Presence, Slot, Struct};
use kwire_codegen::validate::type_name;

/// One element: a field's value, or the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// Field names from the message in, `[]` marking array elements: `Topics[].Name`.
    pub path: String,
    /// The field's place in the schema file: `$.fields[3].fields[0]`.
    pub json_path: String,
    /// The wire form of this element itself; equal forms encode alike.
    pub wire: String,
    /// The schema type, struct names left out (`[]struct`): what the generated type follows.
    pub shape: String,
    /// What follows inside it, in order (an array's element, a struct's fields).
    pub children: Vec<Element>,
    /// A struct's tagged fields (flexible versions), by tag.
    pub tagged: Option<BTreeMap<u32, Element>>,
}

/// The layout of `msg` at `version`: the header version (requests and responses), then the
/// body as one struct element.
pub fn layout(msg: &Message, version: i16) -> Vec<Element> {
    let mut out = Vec::new();
    if let Some(header) = msg.header_version(version) {
        out.push(leaf(String::new(), "$".into(), format!("header v{header}")));
    }
    let walker = Walker { msg, version };
    let (children, tagged) = walker.fields(&msg.fields, "", "$", 0);
    let body = Element { children, tagged, ..leaf(String::new(), "$".into(), "message".into()) };
    out.push(body);
    out
}

fn leaf(path: String, json_path: String, wire: String) -> Element {
    Element { path, json_path, wire, shape: String::new(), children: Vec::new(), tagged: None }
}

/// A type with struct names left out (their contents are compared as layouts).
pub fn shape(ty: &FieldType) -> String {
    match ty {
        FieldType::Struct(_) => "struct".into(),
        FieldType::Array(inner) => format!("[]{}", shape(inner)),
        other => type_name(other),
    }
}

struct Walker<'m> {
    msg: &'m Message,
    version: i16,
}

/// Deep enough for any real schema; a cycle of struct references stops here.
const MAX_DEPTH: usize = 32;

type Fields = (Vec<Element>, Option<BTreeMap<u32, Element>>);

impl Walker<'_> {
    fn lookup(&self, name: &str) -> Option<&Struct> {
        self.msg.structs.iter().find(|s| s.name == name)
    }

    fn fields(&self, fields: &[Field], prefix: &str, json: &str, depth: usize) -> Fields {
        let layout = Layout::of(self.msg, fields, self.version);
        let mut regular = Vec::new();
        let mut tagged = BTreeMap::new();
        for slot in &layout.slots {
            let at = format!("{json}.fields[{}]", slot.index);
            match slot.presence {
                Presence::Absent => {}
                Presence::Regular => regular.push(self.field(slot, prefix, &at, depth, false)),
                Presence::Tagged(tag) => {
                    let mut e = self.field(slot, prefix, &at, depth, true);
                    e.wire = format!("tag {tag}: {}, default {}", e.wire, default_text(&slot.field.default));
                    tagged.insert(tag, e);
                }
            }
        }
        (regular, layout.flexible.then_some(tagged))
    }

    fn field(&self, slot: &Slot<'_>, prefix: &str, json: &str, depth: usize, tagged: bool) -> Element {
        let f = slot.field;
        let (nullable, compact) = (slot.nullable, slot.compact);
        let mut e = self.value(&f.ty, format!("{prefix}{}", f.name), json, nullable, compact, tagged, depth);
        e.shape = shape(&f.ty);
        e
    }

    #[allow(clippy::too_many_arguments)]
    fn value(
        &self,
        ty: &FieldType,
        path: String,
        json: &str,
        nullable: bool,
        compact: bool,
        tagged: bool,
        depth: usize,
    ) -> Element {
        let null = if nullable { "nullable " } else { "" };
        let form = if compact { "compact" } else { "classic" };
        match ty {
            // Records are bytes on the wire.
            FieldType::String => leaf(path, json.into(), format!("{null}{form} string")),
            FieldType::Bytes | FieldType::Records => leaf(path, json.into(), format!("{null}{form} bytes")),
            FieldType::Array(inner) => {
                let mut e = leaf(path.clone(), json.into(), format!("{null}{form} array"));
                if depth < MAX_DEPTH {
                    e.children.push(self.value(inner, format!("{path}[]"), json, false, compact, false, depth + 1));
                }
                e
            }
            FieldType::Struct(name) => {
                let marker = match (nullable, tagged) {
                    (false, _) => "",
                    (true, true) => " with a uvarint presence marker",
                    (true, false) => " with an int8 presence marker",
                };
                let mut e = leaf(path.clone(), json.into(), format!("struct{marker}"));
                if let (Some(s), true) = (self.lookup(name), depth < MAX_DEPTH) {
                    let at = if s.is_common { format!("{json} > commonStructs.{name}") } else { json.to_string() };
                    let prefix = format!("{path}.");
                    (e.children, e.tagged) = self.fields(&s.fields, &prefix, &at, depth + 1);
                }
                e
            }
            other => leaf(path, json.into(), type_name(other)),
        }
    }
}

/// A tagged field's default as the schema means it.
fn default_text(d: &DefaultValue) -> String {
    match d {
        DefaultValue::Implicit => "implicit".into(),
        DefaultValue::Null => "null".into(),
        DefaultValue::Bool(b) => b.to_string(),
        DefaultValue::Int(n) => n.to_string(),
        DefaultValue::Float(f) => format!("{f:?}"),
        DefaultValue::Str(s) => format!("{s:?}"),
        DefaultValue::Uuid(raw) => raw.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// How two layouts of one version differ.
#[derive(Debug, Default)]
pub struct Differences {
    /// `(old element, new element)`: the bytes differ (`None`: nothing there on that side).
    pub breaking: Vec<(Option<Element>, Option<Element>)>,
    /// `(old path, new path)`: the same wire form under another name.
    pub renames: Vec<(String, String)>,
    /// Tagged fields a shipped version gained (old readers skip them; not breaking).
    pub tags_added: Vec<(u32, Element)>,
    /// `(old, new)`: the same bytes, another schema type (bytes to records, say).
    pub type_changes: Vec<(Element, Element)>,
}

/// Compares two layouts of one version.
pub fn differences(old: &[Element], new: &[Element]) -> Differences {
    let mut d = Differences::default();
    sequence(old, new, &mut d);
    d
}

fn sequence(old: &[Element], new: &[Element], d: &mut Differences) {
    for i in 0..old.len().max(new.len()) {
        match (old.get(i), new.get(i)) {
            (Some(a), Some(b)) if a.wire == b.wire => element(a, b, d),
            (a, b) => {
                // Everything after a difference is shifted: the first one says it all.
                d.breaking.push((a.map(shallow), b.map(shallow)));
                return;
            }
        }
    }
}

fn element(a: &Element, b: &Element, d: &mut Differences) {
    if a.path != b.path {
        d.renames.push((a.path.clone(), b.path.clone()));
    }
    if a.shape != b.shape {
        d.type_changes.push((shallow(a), shallow(b)));
    }
    sequence(&a.children, &b.children, d);
    match (&a.tagged, &b.tagged) {
        (Some(ta), Some(tb)) => {
            for (tag, ea) in ta {
                match tb.get(tag) {
                    Some(eb) if eb.wire == ea.wire => element(ea, eb, d),
                    Some(eb) => d.breaking.push((Some(shallow(ea)), Some(shallow(eb)))),
                    None => d.breaking.push((Some(shallow(ea)), None)),
                }
            }
            for (tag, eb) in tb.iter().filter(|(t, _)| !ta.contains_key(t)) {
                d.tags_added.push((*tag, shallow(eb)));
            }
        }
        (None, None) => {}
        _ => d.breaking.push((Some(shallow(a)), Some(shallow(b)))),
    }
}

fn shallow(e: &Element) -> Element {
    Element { shape: e.shape.clone(), ..leaf(e.path.clone(), e.json_path.clone(), e.wire.clone()) }
}
