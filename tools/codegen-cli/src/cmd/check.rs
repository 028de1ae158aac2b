//! `kwire-codegen check`: is the output folder what `generate` would write?

use std::process::ExitCode;

use clap::Args;

use crate::output::{fail, println};
use crate::schema_options::{warn, SchemaOptions};

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    options: SchemaOptions,
}

impl CheckArgs {
    pub fn run(&self) -> ExitCode {
        match self.options.config().check() {
            Ok(generated) => {
                warn(&generated);
                println(format!("{} is up to date: {}", self.options.out.display(), generated.summary()));
                ExitCode::SUCCESS
            }
            Err(e) => fail(e, 1),
        }
    }
}
