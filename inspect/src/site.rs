//! The protocol reference site: an index of every API, a page per API with what each version
//! changed, and a page per API and version with seed 001's view of the smallest legal request
//! and response. Static files with relative links, so it works from `file://`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::explain::html::{escape, page, section};
use crate::explain::{api_name, explain, sample_bytes, Input, Schemas, Side, Style};
use kwire_codegen::ir::{versions_text, Field, FieldType, Message, MessageKind};

/// What `write` wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteReport {
    pub apis: usize,
    pub pages: usize,
    pub bytes: u64,
}

/// One API: its request and response schemas.
pub struct Api<'s> {
    pub key: i16,
    pub name: &'s str,
    pub request: &'s Message,
    pub response: &'s Message,
}

/// The APIs of `schemas` (requests with a response partner), in key order.
pub fn apis(schemas: &Schemas) -> Vec<Api<'_>> {
    let mut by_key: BTreeMap<i16, Api<'_>> = BTreeMap::new();
    for request in schemas.messages().iter().filter(|m| m.kind == MessageKind::Request) {
        let Some(key) = request.api_key else { continue };
        if let Some(response) = schemas.by_key(Side::Response, key) {
            by_key.insert(key, Api { key, name: api_name(request), request, response });
        }
    }
    by_key.into_values().collect()
}

/// The file of an API's version page, and of its page.
pub fn version_page(api: &str, version: i16) -> String {
    format!("{api}-v{version}.html")
}

pub fn api_page(api: &str) -> String {
    format!("{api}.html")
}

/// Writes the site into `out` (created if missing); only the site's own files are written.
pub fn write(schemas: &Schemas, out: &Path) -> std::io::Result<SiteReport> {
    std::fs::create_dir_all(out)?;
    let mut report = SiteReport::default();
    let mut put = |name: String, text: String| -> std::io::Result<()> {
        let path: PathBuf = out.join(name);
        report.bytes += text.len() as u64;
        report.pages += 1;
        std::fs::write(path, text)
    };
    let apis = apis(schemas);
    put("index.html".into(), index(&apis))?;
    for api in &apis {
        put(api_page(api.name), api_history(api))?;
        let v = api.request.valid_versions;
        for version in v.min..=v.max {
            put(version_page(api.name, version), version_html(schemas, api, version))?;
        }
    }
    report.apis = apis.len();
    Ok(report)
}

fn index(apis: &[Api<'_>]) -> String {
    let mut s = String::from(
        "<h1>Kafka protocol reference</h1>\n<p>Every API of the schema folder: its key, versions, flexible versions \
         (compact lengths and tagged fields), deprecated versions, and whether the latest version is unstable. Each \
         version's page shows the bytes of its smallest legal request and response, field by field.</p>\n",
    );
    s.push_str("<table class=\"index\"><tr><th>key</th><th>API</th><th>versions</th><th>flexible</th><th>deprecated</th><th>latest unstable</th><th>pages</th></tr>\n");
    for api in apis {
        let r = api.request;
        let links: Vec<String> = (r.valid_versions.min..=r.valid_versions.max)
            .map(|v| format!("<a href=\"{}\">v{v}</a>", version_page(api.name, v)))
            .collect();
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            api.key,
            api_page(api.name),
            escape(api.name),
            r.valid_versions,
            versions_text(r.flexible_versions),
            versions_text(r.deprecated_versions),
            if r.latest_version_unstable { format!("yes (v{})", r.valid_versions.max) } else { "no".into() },
            links.join(" ")
        );
    }
    s.push_str("</table>\n");
    page("Kafka protocol reference", &s)
}

fn api_history(api: &Api<'_>) -> String {
    let mut s =
        format!("<nav><a href=\"index.html\">index</a></nav>\n<h1>{} (key {})</h1>\n", escape(api.name), api.key);
    for msg in [api.request, api.response] {
        let _ = writeln!(
            s,
            "<h2>{}</h2>\n<p>versions {}, flexible {}, deprecated {}{}</p>",
            escape(&msg.name),
            msg.valid_versions,
            versions_text(msg.flexible_versions),
            versions_text(msg.deprecated_versions),
            if msg.latest_version_unstable { ", latest version unstable" } else { "" }
        );
        s.push_str("<h3>what each version changed</h3>\n<ul>\n");
        for v in msg.valid_versions.min..=msg.valid_versions.max {
            let changes = version_changes(msg, v);
            let link = format!("<a href=\"{}\">v{v}</a>", version_page(api.name, v));
            let text =
                if changes.is_empty() { "no field added, removed or changed".to_string() } else { changes.join("; ") };
            let _ = writeln!(s, "<li>{link}: {}</li>", escape(&text));
        }
        s.push_str("</ul>\n");
        if !msg.history.is_empty() {
            s.push_str("<h3>the schema's version notes</h3>\n");
            for paragraph in &msg.history {
                let _ = writeln!(s, "<p>{}</p>", escape(paragraph));
            }
        }
    }
    page(api.name, &s)
}

/// What `version` of `msg` changed against the one before, from the fields' version ranges.
pub fn version_changes(msg: &Message, version: i16) -> Vec<String> {
    let mut out = Vec::new();
    if version == msg.valid_versions.min {
        out.push("first version".to_string());
    }
    if msg.flexible_versions.is_some_and(|f| f.min == version) {
        out.push("first flexible version (compact lengths, tagged fields)".to_string());
    }
    if msg.deprecated_versions.is_some_and(|d| d.min == version) {
        out.push("deprecated from this version".to_string());
    }
    if msg.latest_version_unstable && version == msg.valid_versions.max {
        out.push("unstable (latestVersionUnstable)".to_string());
    }
    if version > msg.valid_versions.min {
        field_changes(msg, &msg.fields, "", version, 0, &mut out);
    }
    out
}

fn field_changes(msg: &Message, fields: &[Field], prefix: &str, v: i16, depth: usize, out: &mut Vec<String>) {
    for f in fields {
        let path = format!("{prefix}{}", f.name);
        let ty = crate::explain::type_name(&f.ty);
        if f.versions.min == v {
            match (f.tagged_versions, f.tag) {
                (Some(t), Some(tag)) if t.min == v => out.push(format!("adds {path} ({ty}, tagged field {tag})")),
                _ => out.push(format!("adds {path} ({ty})")),
            }
        } else if !f.versions.is_open_ended() && f.versions.max + 1 == v {
            out.push(format!("removes {path}"));
        } else if f.versions.contains(v) {
            if f.nullable_versions.is_some_and(|n| n.min == v) {
                out.push(format!("{path} may be null"));
            }
            if let (Some(t), Some(tag)) = (f.tagged_versions, f.tag) {
                if t.min == v {
                    out.push(format!("{path} becomes tagged field {tag}"));
                }
            }
        }
        let inner = match &f.ty {
            FieldType::Struct(name) => Some(name),
            FieldType::Array(inner) => match inner.as_ref() {
                FieldType::Struct(name) => Some(name),
                _ => None,
            },
            _ => None,
        };
        if let (Some(name), true) = (inner, f.versions.contains(v) && f.versions.min < v && depth < 8) {
            if let Some(s) = msg.structs.iter().find(|s| &s.name == name) {
                field_changes(msg, &s.fields, &format!("{path}."), v, depth + 1, out);
            }
        }
    }
}

fn version_html(schemas: &Schemas, api: &Api<'_>, version: i16) -> String {
    let mut sections = String::new();
    let mut summary: Vec<(String, String)> = vec![
        ("API key".into(), api.key.to_string()),
        ("Encoded at".into(), format!("v{version}")),
        ("Flexible versions".into(), versions_text(api.request.flexible_versions)),
    ];
    let mut headers = Vec::new();
    let mut sizes = Vec::new();
    for (side, msg) in [(Side::Request, api.request), (Side::Response, api.response)] {
        if !msg.valid_versions.contains(version) {
            let _ = writeln!(sections, "<p>{} has no version {version}.</p>", escape(&msg.name));
            continue;
        }
        let bytes = sample_bytes(msg, version, side, true);
        let input = Input {
            side,
            api: Some(api.name),
            version: Some(version),
            frame: true,
            bytes: &bytes,
            style: Style { sample: true },
        };
        match explain(schemas, &input) {
            Ok(e) => {
                let word = if side == Side::Request { "Request" } else { "Response" };
                let _ = writeln!(sections, "<h2>{word}</h2>");
                headers.push(format!(
                    "{} v{}",
                    if side == Side::Request { "req" } else { "resp" },
                    e.header_version.unwrap_or(0)
                ));
                sizes.push((format!("{word} size"), format!("{} bytes", e.bytes.len())));
                let schema = schemas.schema_text(msg);
                sections.push_str(&section(&e, schema.as_deref(), if side == Side::Request { "req" } else { "resp" }));
            }
            Err(err) => {
                let _ = writeln!(sections, "<p class=\"bad\">{}: {}</p>", escape(&msg.name), escape(&err.to_string()));
            }
        }
    }
    summary.push(("Headers".into(), headers.join(", ")));
    summary.push(("Request versions".into(), api.request.valid_versions.to_string()));
    summary.push(("Response versions".into(), api.response.valid_versions.to_string()));
    summary.extend(sizes);
    let flexible = api.request.flexible_versions.is_some_and(|f| f.contains(version));
    let encoding = if flexible {
        format!("Version {version} is a flexible version, so every struct ends with a uvarint count of tagged fields and strings and arrays carry compact length-plus-one prefixes.")
    } else {
        format!("Version {version} is not a flexible version: strings carry int16 lengths, arrays and bytes int32 lengths, and there are no tagged fields.")
    };
    let mut nav = format!(
        "<nav><a href=\"index.html\">index</a><a href=\"{}\">{} versions</a>",
        api_page(api.name),
        escape(api.name)
    );
    let range = api.request.valid_versions;
    if version > range.min {
        let _ = write!(nav, "<a href=\"{}\">v{}</a>", version_page(api.name, version - 1), version - 1);
    }
    if version < range.max {
        let _ = write!(nav, "<a href=\"{}\">v{}</a>", version_page(api.name, version + 1), version + 1);
    }
    nav.push_str("</nav>");
    let mut s = format!("{nav}\n<h1>{}</h1>\n", escape(api.name));
    let _ = writeln!(
        s,
        "<p>This page encodes the smallest legal instance of the request and the response: numeric fields are zero, strings and byte arrays are empty, every array carries exactly one sample element, and any records field holds one empty 61-byte RecordBatch v2. {encoding} Sizes include the leading int32 size prefix.</p>"
    );
    s.push_str("<dl class=\"summary\">");
    for (k, v) in summary {
        let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", escape(&k), escape(&v));
    }
    s.push_str("</dl>\n");
    s.push_str(&sections);
    page(&format!("{} v{version}", api.name), &s)
}
