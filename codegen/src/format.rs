//! Writing token streams as file text: pretty-printed in-process with prettyplease (feature
//! `pretty`, so output never depends on an installed rustfmt), or as the tokens' own text for
//! output nobody reads (a build script's `OUT_DIR`), which needs neither syn nor prettyplease.

use proc_macro2::TokenStream;

use crate::Error;

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

/// The tokens' text as it is (one long line), ending with a newline.
fn plain(tokens: TokenStream) -> String {
    let mut out = tokens.to_string();
    out.push('\n');
    out
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
fn pretty_print(file: &str, _tokens: TokenStream) -> Result<String, Error> {
    Err(Error::Format {
        file: file.to_string(),
        message: "formatted output needs kafka-wire-codegen's `pretty` feature (or `Config::pretty(false)`)"
            .to_string(),
    })
}
