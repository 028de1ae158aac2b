//! Writing token streams as file text: pretty-printed in-process with prettyplease (feature
//! `pretty`, so output never depends on an installed rustfmt), or for a build script's
//! `OUT_DIR` in the plain layout ([`plain`]: one item or statement a line, indented, no line
//! longer than rustfmt would leave), which needs neither syn nor prettyplease and costs next
//! to nothing.

mod plain;
mod tokens;

use proc_macro2::TokenStream;

use crate::Error;
use plain::plain;

/// `tokens` as a file, prefixed with `header` comment lines; formatted when `pretty` is set.
pub fn format_file(file: &str, header: &str, tokens: TokenStream, pretty: bool) -> Result<String, Error> {
    let body = if pretty { pretty_print(file, tokens)? } else { plain(tokens) };
    let mut out = String::with_capacity(header.len() + body.len() + 1);
    for line in header.lines() {
        out.push_str("// ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&body);
    Ok(out)
}

#[cfg(feature = "pretty")]
fn pretty_print(file: &str, tokens: TokenStream) -> Result<String, Error> {
    let parsed: syn::File = syn::parse2(tokens.clone()).map_err(|e| Error::Format {
        file: file.to_string(),
        message: format!("{e}; unformatted tokens:\n{tokens}"),
    })?;
    Ok(prettyplease::unparse(&parsed))
}

#[cfg(not(feature = "pretty"))]
fn pretty_print(_file: &str, _tokens: TokenStream) -> Result<String, Error> {
    Err(Error::PrettyNotEnabled)
}
