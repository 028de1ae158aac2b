//! `diff` judges wire compatibility by a layout it derives from the IR; the explain
//! interpreter (itself checked against the generated code) reads real bytes. Over the whole
//! corpus, every version: the fields the layout lists, in its order and with its length form
//! (compact or classic), are the fields explain finds in the smallest legal instance.

use kwire_inspect::diff::layout::{layout, Element};
use kwire_inspect::explain::{explain_body, Node, Style};
use kwire_tests::sample::{self, Mode};
use kwire_tests::SCHEMAS;

/// Nodes explain adds that are not fields: lengths, the tagged section, presence markers.
fn is_field(node: &Node) -> bool {
    !matches!(node.label.as_str(), "length" | "tagged_fields" | "present" | "marker")
}

/// The last segment of a layout path (`Topics[].Name` → `Name`).
fn field_name(e: &Element) -> &str {
    e.path.rsplit('.').next().unwrap_or(&e.path)
}

/// Whether explain wrote this node's length in the compact form.
fn shown_compact(node: &Node) -> bool {
    let length = node.children.iter().find(|c| c.label == "length");
    let text = length.and_then(|l| l.value.as_deref()).or(node.value.as_deref()).unwrap_or("");
    text.contains("compact")
}

fn compare(want: &[Element], got: &[Node], at: &str, out: &mut Vec<String>) {
    let got: Vec<&Node> = got.iter().filter(|n| is_field(n)).collect();
    let want_names: Vec<&str> = want.iter().map(field_name).collect();
    let got_names: Vec<&str> = got.iter().map(|n| n.label.as_str()).collect();
    if want_names != got_names {
        out.push(format!("{at}: layout lists {want_names:?}, explain read {got_names:?}"));
        return;
    }
    for (e, n) in want.iter().zip(got) {
        let here = format!("{at}.{}", field_name(e));
        let lengthy = ["string", "bytes", "array"].iter().any(|k| e.wire.ends_with(k));
        if lengthy && e.wire.contains("compact") != shown_compact(n) {
            out.push(format!("{here}: layout says {:?}, explain shows {:?}", e.wire, n.value));
        }
        if e.shape == "records" || e.wire.ends_with("bytes") {
            continue;
        }
        // An array's one sample element, or a struct's fields.
        let (want_inner, got_inner) = match e.children.first() {
            Some(elem) if e.wire.ends_with("array") => {
                let node = n.children.iter().find(|c| c.label.ends_with("[0]"));
                match node {
                    Some(node) if !elem.children.is_empty() => (&elem.children[..], &node.children[..]),
                    _ => continue,
                }
            }
            _ => (&e.children[..], &n.children[..]),
        };
        compare(want_inner, got_inner, &here, out);
    }
}

#[test]
fn diff_layout_lists_what_explain_reads() {
    let (mut checked, mut failures) = (0usize, Vec::new());
    for entry in SCHEMAS {
        let msg = entry.load();
        for v in msg.valid_versions.min..=msg.valid_versions.max {
            let bytes = sample::encode(&msg, v, Mode::Minimal);
            let body = explain_body(&msg, v, &bytes, 0, Style { sample: true });
            let name = format!("{}/{} v{v}", entry.set, entry.name);
            if let Err(fail) = &body.json {
                failures.push(format!("{name}: explain: {fail}"));
                continue;
            }
            let elements = layout(&msg, v);
            let message = elements.last().expect("the body element");
            compare(&message.children, &body.node.children, &name, &mut failures);
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} versions checked");
    assert!(
        failures.is_empty(),
        "{} differences over {checked} schema versions:\n{}",
        failures.len(),
        failures[..failures.len().min(15)].join("\n")
    );
    println!("{checked} schema versions: diff's layout lists what explain reads");
}
