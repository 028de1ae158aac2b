//! The plain layout a build script writes into `OUT_DIR`, over Kafka's whole corpus (every
//! message with JSON, the internal families, the generator's test schemas): the same code as
//! the formatted output (both parsed and printed by prettyplease agree), and no line longer
//! than rustfmt would leave (100 columns) unless a literal alone makes it so.

use std::path::{Path, PathBuf};

use kwire_codegen::Config;

const WIDTH: usize = 100;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The generated files of `dir`, plain and formatted.
fn both(dir: &Path) -> Vec<(String, String, String)> {
    let generate = |pretty: bool| {
        let mut config = Config::new();
        config.schema_dir(dir).json(true).pretty(pretty);
        config.generate().unwrap_or_else(|e| panic!("{}: {e}", dir.display())).files
    };
    let (plain, pretty) = (generate(false), generate(true));
    plain.into_iter().map(|(name, text)| (pretty[&name].clone(), name, text)).map(|(p, n, t)| (n, t, p)).collect()
}

/// Whether rustfmt would leave `line` as long as it is: a literal alone makes it so (the line
/// fits with the contents of its string literals left out), or it uses one long path.
fn unbreakable(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let one_path = matches!(words[..], ["use", _] | ["pub", "use", _]);
    one_path || without_literals(line).chars().count() <= WIDTH
}

/// `line` with the contents of its string literals left out.
fn without_literals(line: &str) -> String {
    let (mut out, mut inside, mut escaped) = (String::new(), false, false);
    for c in line.chars() {
        match (inside, c) {
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (true, '"') => {
                inside = false;
                out.push(c);
            }
            (true, _) => {}
            (false, '"') => {
                inside = true;
                out.push(c);
            }
            (false, _) => out.push(c),
        }
    }
    out
}

#[test]
fn the_plain_layout_is_the_formatted_code_on_lines_rustfmt_would_leave() {
    let mut dirs = vec![kwire_codegen::locate_kafka_schemas(&workspace()).expect("Kafka's schemas")];
    dirs.extend(kwire_codegen::kafka_schema_sets(&workspace()).into_iter().map(|(_, source)| source));
    let mut files = 0;
    let mut long = Vec::new();
    for dir in dirs.iter().filter(|d| kwire_codegen::source::watched_path(d).exists()) {
        for (name, plain, pretty) in both(dir) {
            files += 1;
            let parsed =
                syn::parse_file(&plain).unwrap_or_else(|e| panic!("{name}: the plain layout does not parse: {e}"));
            let body: String = pretty.lines().skip_while(|l| l.starts_with("//")).map(|l| format!("{l}\n")).collect();
            if prettyplease::unparse(&parsed) != body {
                let printed = prettyplease::unparse(&parsed);
                let at = printed.lines().zip(body.lines()).position(|(a, b)| a != b).unwrap_or(0);
                panic!(
                    "{name}: the plain layout is other code than the formatted output, from line {at}:\n{}\n---\n{}",
                    printed.lines().skip(at).take(5).collect::<Vec<_>>().join("\n"),
                    body.lines().skip(at).take(5).collect::<Vec<_>>().join("\n")
                );
            }
            long.extend(
                plain
                    .lines()
                    .filter(|l| l.chars().count() > WIDTH && !unbreakable(l))
                    .map(|l| format!("{name}: {} columns: {l}", l.chars().count())),
            );
        }
    }
    assert!(files > 150, "only {files} files generated");
    assert!(
        long.is_empty(),
        "{} lines over {WIDTH} columns, the first ones:\n{}",
        long.len(),
        long[..long.len().min(60)].join("\n")
    );
}
