//! Writing token streams as file text: pretty-printed in-process with prettyplease (feature
//! `pretty`, so output never depends on an installed rustfmt), or for a build script's
//! `OUT_DIR` as the tokens' own text on readable lines (one item or statement a line,
//! indented), which needs neither syn nor prettyplease and costs next to nothing.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

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

/// The tokens' text, broken into lines between items and statements and indented by block
/// depth, so an editor can jump into it; a cheap walk of the token trees (no parsing), for
/// output nobody formats.
fn plain(tokens: TokenStream) -> String {
    let mut printer = LinePrinter { out: String::new(), depth: 0, line_start: true };
    printer.stream(tokens, true, false);
    if !printer.out.ends_with('\n') {
        printer.out.push('\n');
    }
    printer.out
}

/// A block of comma-separated parts: no statement (`;`) and no item (`fn`) at its top level.
fn is_list(block: &TokenStream) -> bool {
    !block.clone().into_iter().any(|t| match &t {
        TokenTree::Punct(p) => p.as_char() == ';',
        TokenTree::Ident(i) => i == "fn",
        _ => false,
    })
}

struct LinePrinter {
    out: String,
    depth: usize,
    line_start: bool,
}

impl LinePrinter {
    /// Prints `tokens`; `statements` when they are a block's or the file's (where `;` ends a
    /// line), not an argument list's or an attribute's; `list` when they are a block of
    /// comma-separated parts (fields, struct literals, match arms), where `,` ends a line.
    fn stream(&mut self, tokens: TokenStream, statements: bool, list: bool) {
        let mut after_pound = false;
        for tree in tokens {
            match tree {
                TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                    self.word("{");
                    self.newline();
                    self.depth += 1;
                    let list = is_list(&g.stream());
                    self.stream(g.stream(), true, list);
                    self.depth -= 1;
                    self.newline();
                    self.word("}");
                    if statements {
                        self.newline();
                    }
                }
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        _ => ("", ""),
                    };
                    self.word(open);
                    self.stream(g.stream(), false, false);
                    self.word(close);
                    if statements && after_pound && g.delimiter() == Delimiter::Bracket {
                        self.newline();
                    }
                }
                TokenTree::Punct(p) => {
                    let c = p.as_char();
                    if c == ',' && self.line_start {
                        // A `,` after a block that ended its line belongs on that line.
                        self.out.pop();
                        self.line_start = false;
                    }
                    self.word(&c.to_string());
                    if p.spacing() == Spacing::Joint {
                        self.out.pop();
                    } else if statements && c == ';' || list && c == ',' {
                        self.newline();
                    }
                }
                other => self.word(&other.to_string()),
            }
            after_pound = self.out.trim_end().ends_with('#');
        }
    }

    /// Writes `text` and a space, indenting first at the start of a line.
    fn word(&mut self, text: &str) {
        if self.line_start {
            for _ in 0..self.depth {
                self.out.push_str("    ");
            }
            self.line_start = false;
        }
        self.out.push_str(text);
        self.out.push(' ');
    }

    fn newline(&mut self) {
        if !self.line_start {
            while self.out.ends_with(' ') {
                self.out.pop();
            }
            self.out.push('\n');
            self.line_start = true;
        }
    }
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
