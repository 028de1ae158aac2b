//! `scripts/module-cycles` (run by `scripts/check`) on workspaces made up here: with no
//! arguments it finds every crate through `cargo metadata`, a crate moved deep into the tree
//! included, and it fails on modules that import each other, and only on those.

use std::path::Path;
use std::process::{Command, Output};

/// A workspace with the script in its `scripts/`, and `crates` (folder, `[(file, code)]`).
fn workspace(crates: &[(&str, &[(&str, &str)])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let members: Vec<String> = crates.iter().map(|(folder, _)| format!("{folder:?}")).collect();
    let manifest = format!("[workspace]\nresolver = \"2\"\nmembers = [{}]\n", members.join(", "));
    std::fs::write(root.join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir(root.join("scripts")).unwrap();
    let script = kwire_tests::workspace_root().join("scripts/module-cycles");
    std::fs::copy(script, root.join("scripts/module-cycles")).unwrap();
    for (folder, files) in crates {
        let name = Path::new(folder).file_name().unwrap().to_str().unwrap();
        let package = format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
        write(&root.join(folder).join("Cargo.toml"), &package);
        for (file, code) in *files {
            write(&root.join(folder).join("src").join(file), code);
        }
    }
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn run(root: &Path) -> (Output, String) {
    let output = Command::new("python3").arg(root.join("scripts/module-cycles")).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output, text)
}

/// A crate whose `store` and `net::server` import each other (through a `use` group and a
/// `super::super::` path); `net` and `net::server` are parent and child, which is no cycle.
const CYCLIC: &[(&str, &str)] = &[
    ("lib.rs", "pub mod net;\npub mod store;\n"),
    ("store.rs", "use crate::{net::{server::Server}};\npub struct Store(pub Server);\n"),
    ("net/mod.rs", "pub mod server;\npub use self::server::Server;\n"),
    (
        "net/server.rs",
        "pub struct Server;\nimpl Server { pub fn store(&self) -> Option<super::super::store::Store> { None } }\n",
    ),
];

/// The same crate with the import back gone, and mentions of `crate::` that are no imports: a
/// string, a comment, a `pub(in …)` visibility and a unit test.
const ACYCLIC: &[(&str, &str)] = &[
    ("lib.rs", "pub mod net;\npub mod store;\n"),
    ("store.rs", "use crate::{net::{server::Server}};\npub struct Store(pub Server);\n"),
    ("net/mod.rs", "pub mod server;\npub use self::server::Server;\n"),
    (
        "net/server.rs",
        "pub struct Server;\n\
         // crate::store::Store is what a server would hand out\n\
         pub(in crate::net) fn name() -> &'static str { \"crate::store::Store\" }\n\
         #[cfg(test)]\nmod tests {\n    use crate::store::Store;\n    #[test]\n    fn t() { let _ = Store(super::Server); }\n}\n",
    ),
];

#[test]
fn a_crate_found_through_cargo_metadata_with_a_cycle_fails_the_check() {
    let dir = workspace(&[("plain", &[("lib.rs", "pub fn f() {}\n")]), ("deep/moved/cyclic", CYCLIC)]);
    let (output, text) = run(dir.path());
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("cyclic: modules import each other: net::server, store"), "{text}");
    assert!(!text.contains("plain"), "{text}");
}

#[test]
fn the_same_crate_without_the_import_back_passes() {
    let dir = workspace(&[("plain", &[("lib.rs", "pub fn f() {}\n")]), ("deep/moved/cyclic", ACYCLIC)]);
    let (output, text) = run(dir.path());
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("no import cycles in 2 library crates"), "{text}");
}
