//! Java `.properties` files as Kafka 0.7 reads them (`java.util.Properties.load`): `key=value`,
//! `key: value` or `key value`; `#` and `!` comments; a trailing `\` continues the line; `\t`,
//! `\n`, `\r`, `\f`, `\uXXXX` and `\<char>` escapes. Later keys replace earlier ones.

use std::collections::BTreeMap;

/// Where a property came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    File { path: String, line: usize },
    Flag(&'static str),
    Set,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::File { path, line } => write!(f, "{path}:{line}"),
            Source::Flag(flag) => write!(f, "{flag}"),
            Source::Set => write!(f, "--set"),
        }
    }
}

/// Property values with their origin.
#[derive(Debug, Clone, Default)]
pub struct Properties {
    entries: BTreeMap<String, (String, Source)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct SyntaxError {
    pub path: String,
    pub line: usize,
    pub message: String,
}

impl Properties {
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>, source: Source) {
        self.entries.insert(key.into(), (value.into(), source));
    }

    pub fn get(&self, key: &str) -> Option<(&str, &Source)> {
        self.entries.get(key).map(|(v, s)| (v.as_str(), s))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &Source)> {
        self.entries.iter().map(|(k, (v, s))| (k.as_str(), v.as_str(), s))
    }

    /// Parses `text` (the contents of `path`) and adds its properties.
    pub fn load(&mut self, path: &str, text: &str) -> Result<(), SyntaxError> {
        let mut lines = text.lines().enumerate();
        while let Some((idx, first)) = lines.next() {
            let trimmed = first.trim_start_matches([' ', '\t', '\x0c']);
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
                continue;
            }
            // Join continuation lines: an odd number of trailing backslashes continues.
            let mut logical = String::from(trimmed);
            while ends_with_continuation(&logical) {
                logical.pop();
                match lines.next() {
                    Some((_, next)) => logical.push_str(next.trim_start_matches([' ', '\t', '\x0c'])),
                    None => break,
                }
            }
            let line = idx + 1;
            let err = |message: String| SyntaxError { path: path.to_owned(), line, message };
            let (key, value) = split_key_value(&logical);
            let key = unescape(key).map_err(err)?;
            let value = unescape(value).map_err(err)?;
            self.insert(key, value, Source::File { path: path.to_owned(), line });
        }
        Ok(())
    }
}

fn ends_with_continuation(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Splits at the first unescaped `=`, `:` or whitespace; the separator and whitespace around it
/// are dropped.
fn split_key_value(line: &str) -> (&str, &str) {
    let mut escaped = false;
    let mut end = line.len();
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' | ' ' | '\t' | '\x0c' => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let key = &line[..end];
    let mut rest = line[end..].trim_start_matches([' ', '\t', '\x0c']);
    if let Some(r) = rest.strip_prefix(['=', ':']) {
        rest = r.trim_start_matches([' ', '\t', '\x0c']);
    }
    (key, rest)
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .ok_or_else(|| format!("malformed \\u escape \\u{hex}"))?;
                out.push(char::from_u32(code).ok_or_else(|| format!("\\u{hex} is not a character"))?);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(String, String)> {
        let mut p = Properties::default();
        p.load("t", text).unwrap();
        p.iter().map(|(k, v, _)| (k.to_owned(), v.to_owned())).collect()
    }

    #[test]
    fn separators_comments_and_whitespace() {
        let got = parse("# c\n! c\n\n  a=1\nb : 2\nc 3\nd=\ne= x y \n");
        let want = [("a", "1"), ("b", "2"), ("c", "3"), ("d", ""), ("e", "x y ")];
        assert_eq!(got, want.map(|(k, v)| (k.to_owned(), v.to_owned())));
    }

    #[test]
    fn continuation_and_escapes() {
        let got = parse("k=a,\\\n   b\nx\\:y=\\u0041\\t\\\\\n");
        assert_eq!(got, vec![("k".into(), "a,b".into()), ("x:y".into(), "A\t\\".into())]);
    }

    #[test]
    fn malformed_unicode_escape_names_the_line() {
        let mut p = Properties::default();
        let e = p.load("f.properties", "a=1\nb=\\u00zz\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("f.properties:2:"), "{e}");
    }

    #[test]
    fn later_keys_win_and_remember_their_line() {
        let mut p = Properties::default();
        p.load("f", "a=1\na=2\n").unwrap();
        assert_eq!(p.get("a"), Some(("2", &Source::File { path: "f".into(), line: 2 })));
    }
}
