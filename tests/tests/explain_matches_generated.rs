//! The explain interpreter is a second decoder, driven by the IR at run time: over the whole
//! corpus (every schema of every set, every version; the minimal instance and random ones with
//! nulls, tagged fields and unknown tags) it must read the same field values as the generated
//! code (compared through Kafka-style JSON) and use the same number of bytes.

use kwire_inspect::explain::{explain_body, Style};
use kwire_tests::sample::{self, Mode, Rng};
use kwire_tests::SCHEMAS;

#[test]
fn interpreter_reads_what_generated_code_reads() {
    let mut failures = Vec::new();
    let (mut checked, mut with_tags) = (0usize, 0usize);
    let mut rng = Rng::new(0x5eed_0015);
    for entry in SCHEMAS {
        let msg = entry.load();
        let valid = msg.valid_versions;
        for v in valid.min..=valid.max {
            for mode in [Mode::Minimal, Mode::Random(Rng::new(rng.next_u64())), Mode::Random(Rng::new(rng.next_u64()))]
            {
                let bytes = sample::encode(&msg, v, mode);
                checked += 1;
                let (expected, used) = match (entry.ops.decoded_json)(&bytes, v) {
                    Ok(r) => r,
                    Err(e) => {
                        failures.push(format!("{}/{} v{v}: generated code: {e}", entry.set, entry.name));
                        continue;
                    }
                };
                let body = explain_body(&msg, v, &bytes, 0, Style::default());
                let name = format!("{}/{} v{v}", entry.set, entry.name);
                match body.json {
                    Err(fail) => {
                        failures.push(format!("{name}: interpreter: {fail}\n  bytes: {}", hex::encode(&bytes)))
                    }
                    Ok(json) if json != expected => failures.push(format!(
                        "{name}: values differ\n  generated:   {expected}\n  interpreter: {json}\n  bytes: {}",
                        hex::encode(&bytes)
                    )),
                    Ok(_) if body.consumed != used => {
                        failures.push(format!("{name}: interpreter used {} bytes, generated {used}", body.consumed))
                    }
                    Ok(_) => {}
                }
                if body.node.has_malformed() {
                    failures.push(format!("{name}: the tree has a malformed mark"));
                }
                with_tags += usize::from(render_has_tags(&body.node));
            }
        }
    }
    println!("interpreter vs generated: {checked} instances, {with_tags} with tagged values");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(15)].join("\n")
    );
    assert!(checked >= 3 * 780, "only {checked} instances");
    assert!(with_tags > checked / 20, "only {with_tags} instances carried tagged values");
}

fn render_has_tags(node: &kwire_inspect::explain::Node) -> bool {
    (node.label == "tagged_fields" && node.value.as_deref() != Some("0")) || node.children.iter().any(render_has_tags)
}
