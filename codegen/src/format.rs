//! Formatting in-process with prettyplease, so output never depends on an installed rustfmt.

use proc_macro2::TokenStream;

use crate::Error;

/// Parses `tokens` as a file and pretty-prints it, prefixed with `header` comment lines.
pub fn format_file(file: &str, header: &str, tokens: TokenStream) -> Result<String, Error> {
    let parsed: syn::File = syn::parse2(tokens.clone()).map_err(|e| Error::Format {
        file: file.to_string(),
        message: format!("{e}; unformatted tokens:\n{tokens}"),
    })?;
    let body = prettyplease::unparse(&parsed);
    let mut out = String::with_capacity(header.len() + body.len() + 1);
    for line in header.lines() {
        out.push_str("// ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&body);
    Ok(out)
}
