//! Seed 001's page: the bytes 16 to a row coloured by region, the object tree, and the schema;
//! hovering a byte highlights its node, hovering a node its bytes. One self-contained file:
//! inline style and script, no external resources, so it works from `file://`.

use std::fmt::Write as _;

use super::node::Region;
use super::{Explained, Schemas, Side};

/// Escapes text for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
h1{margin:0 0 .3em}h2{margin:1.5em 0 .3em}h3{margin:1em 0 .3em;font-size:1em}
dl.summary{display:grid;grid-template-columns:max-content auto;gap:.1em 1em}dl.summary dt{font-weight:600}dl.summary dd{margin:0}
.legend span{display:inline-block;padding:0 .5em;margin-right:.3em;border-radius:3px}
table.bytes{border-collapse:collapse;font:13px/1.2 ui-monospace,monospace}
table.bytes th{font-weight:400;color:#888;padding:2px 5px}
table.bytes td{padding:2px 5px;text-align:center;cursor:default}
.frame{background:#fde2c8}.header{background:#d6e6fb}.body{background:#d9f2d9}.batch{background:#f3d6f0}.record{background:#efe3c0}.tags{background:#e2e2e2}
.response .body{background:#cdeee9}
.hl{outline:2px solid #d33;position:relative}
pre.tree{font:13px/1.35 ui-monospace,monospace;overflow-x:auto}
pre.tree span.n{display:block;white-space:pre}
pre.tree span.n.hl{background:#ffe9a8;outline:none}
pre.tree span.bad{color:#b00;font-weight:600}
pre.schema{font:12px/1.3 ui-monospace,monospace;background:#f6f6f6;padding:1em;overflow-x:auto;max-height:30em}
nav a{margin-right:1em}
table.index{border-collapse:collapse}table.index td,table.index th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
"#;

const SCRIPT: &str = r#"
(function(){
  function clear(root){root.querySelectorAll('.hl').forEach(function(e){e.classList.remove('hl');});}
  document.querySelectorAll('section.message').forEach(function(sec){
    var cells=sec.querySelectorAll('td[data-i]');
    var lines=sec.querySelectorAll('span.n');
    function bytes(o,s){for(var i=o;i<o+s&&i<cells.length;i++){cells[i].classList.add('hl');}}
    cells.forEach(function(td){td.addEventListener('mouseenter',function(){
      clear(sec);var n=sec.querySelector('#'+td.dataset.n);
      if(n){n.classList.add('hl');bytes(+n.dataset.o,+n.dataset.s);}else{td.classList.add('hl');}
    });});
    lines.forEach(function(l){l.addEventListener('mouseenter',function(){
      clear(sec);l.classList.add('hl');if(l.dataset.o!==undefined){bytes(+l.dataset.o,+l.dataset.s);}
    });});
    sec.addEventListener('mouseleave',function(){clear(sec);});
  });
  document.body.dataset.ready=document.querySelectorAll('td[data-i]').length;
})();
"#;

/// A whole page around `content`.
pub fn page(title: &str, content: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{content}\n<script>{SCRIPT}</script>\n</body></html>\n",
        escape(title)
    )
}

/// The legend of the byte grid's colours, in seed 001's words.
pub fn legend(side: Side) -> String {
    let body = if side == Side::Request { "request body" } else { "response body" };
    let mut out = String::from("<p class=\"legend\">");
    for region in Region::ALL {
        let name = match region {
            Region::Frame => "frame",
            Region::Header => "rpc header",
            Region::Body => body,
            Region::RecordBatch => "RecordBatch",
            Region::Record => "Record",
            Region::TaggedFields => "tagged_fields",
        };
        let _ = write!(out, "<span class=\"{}\">{}</span>", region.class(), escape(name));
    }
    out.push_str("</p>");
    out
}

/// One message: heading, legend, byte grid, tree and (when known) schema text.
pub fn section(e: &Explained, schema: Option<&str>, id: &str) -> String {
    let side = if e.side == Side::Request { "request" } else { "response" };
    let header = e.header_version.map(|h| format!(", {side} header v{h}")).unwrap_or_default();
    let mut out = format!("<section class=\"message {side}\" id=\"{id}\">\n");
    let name = e.root.label.as_str();
    let _ = writeln!(out, "<h3>{} v{}{header}, {} bytes on the wire</h3>", escape(name), e.version, e.bytes.len());
    out.push_str(&legend(e.side));
    // Lines first, so that each byte can name the deepest node that holds it.
    // Parents come before their children, so each byte ends up with its deepest node.
    let lines = super::node::lines(&e.root);
    let mut owner: Vec<Option<(usize, Region)>> = vec![None; e.bytes.len()];
    for (index, (_, node)) in lines.iter().enumerate().filter(|(_, (_, n))| !n.decompressed) {
        let end = (node.offset + node.size).min(owner.len());
        for slot in owner.iter_mut().take(end).skip(node.offset) {
            *slot = Some((index, node.region));
        }
    }
    let _ = writeln!(out, "<h3>byte layout ({} bytes, 16 bytes per row)</h3>", e.bytes.len());
    out.push_str("<table class=\"bytes\"><tr><th></th>");
    for c in 0..16 {
        let _ = write!(out, "<th>{c:X}</th>");
    }
    out.push_str("</tr>\n");
    for (row, chunk) in e.bytes.chunks(16).enumerate() {
        let _ = write!(out, "<tr><th>{:04X}</th>", row * 16);
        for (col, b) in chunk.iter().enumerate() {
            let i = row * 16 + col;
            let (node, class) = match owner[i] {
                Some((n, region)) => (format!("{id}-n{n}"), region.class()),
                None => (String::new(), ""),
            };
            let _ = write!(out, "<td class=\"{class}\" data-i=\"{i}\" data-n=\"{node}\">{b:02x}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n<h3>object tree</h3>\n<pre class=\"tree\">");
    for (n, (text, node)) in lines.iter().enumerate() {
        let bad = if node.malformed { " bad" } else { "" };
        if node.decompressed {
            let _ = write!(out, "<span class=\"n{bad}\" id=\"{id}-n{n}\">{}</span>", escape(text));
        } else {
            let _ = write!(
                out,
                "<span class=\"n{bad}\" id=\"{id}-n{n}\" data-o=\"{}\" data-s=\"{}\">{}</span>",
                node.offset,
                node.size,
                escape(text)
            );
        }
    }
    out.push_str("</pre>\n");
    if let Some(schema) = schema {
        let _ = writeln!(out, "<h3>kafka message schema (.json)</h3>\n<pre class=\"schema\">{}</pre>", escape(schema));
    }
    out.push_str("</section>\n");
    out
}

/// `explain --format html`: a page with one section per message explained.
pub fn page_for(schemas: &Schemas, all: &[Explained]) -> String {
    let title = all.first().map_or_else(|| "explain".to_string(), |e| e.api.clone());
    let mut content = format!("<h1>{}</h1>\n", escape(&title));
    for (i, e) in all.iter().enumerate() {
        let schema = schemas.messages().iter().find(|m| m.file == e.schema).and_then(|m| schemas.schema_text(m));
        content.push_str(&section(e, schema.as_deref(), &format!("m{i}")));
    }
    page(&title, &content)
}
