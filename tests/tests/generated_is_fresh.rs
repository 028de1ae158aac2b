//! The checked-in `generated/src/messages` must be exactly what the CLI generates from
//! `schemas/` (like rust-analyzer's codegen test). Locally a stale folder is rewritten (and the
//! test still fails, so the change gets committed); under CI it only fails, naming the command.

use std::path::PathBuf;

use kwire_codegen::{config::cli_command, Config};

#[test]
fn generated_crate_matches_schemas() {
    let root = kwire_tests::workspace_root();
    let (schemas, out) = (PathBuf::from("schemas"), PathBuf::from("generated/src/messages"));
    let command = cli_command(std::slice::from_ref(&schemas), &out, "::kwire_runtime", &[]);
    let mut config = Config::new();
    // The project's own schemas are new authoring: no legacy allowance.
    config.schema_dir(root.join(&schemas)).out_dir(root.join(&out)).regenerate_command(&command).strict(true);
    if let Err(stale) = config.check() {
        if std::env::var_os("CI").is_none() {
            config.write().expect("rewriting generated/");
            panic!("{stale}\n\nThe files were regenerated; review and commit them.");
        }
        panic!(
            "{stale}\n\nNOTE: run `cargo run -p kwire-codegen-cli -- generate` (or, installed, `{command}`) \
             in the workspace root and commit the updated files."
        );
    }
}
