//! Reading schema text: strip Kafka's `//` and `/* */` comments, parse the JSON with
//! the engine's JSON reader (`json`), check its keys, then read the typed model (`schema`).

use crate::diagnostics::{SchemaError, SchemaErrors, SchemaWarning};
use crate::json::{self, Map, Value};
use crate::schema::{MessageSpec, FIELD_KEYS, MESSAGE_KEYS, STRUCT_KEYS};

/// Replaces every comment with spaces (keeping newlines), leaving string literals untouched,
/// so that line and column numbers in later errors still point into the original text.
///
/// Fails only on a block comment that never ends.
pub fn strip_comments(text: &str) -> Result<String, (usize, usize)> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut in_string = false;
    while let Some((pos, c)) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    // Keep the escaped character, whatever it is (`\"` must not end the string).
                    if let Some((_, escaped)) = chars.next() {
                        out.push(escaped);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek().map(|&(_, next)| next)) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                out.push(' ');
                // Blank the rest of the line; the newline itself is kept.
                while let Some(&(_, next)) = chars.peek() {
                    if next == '\n' {
                        break;
                    }
                    out.push(blank(next));
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
                let mut closed = false;
                while let Some((_, inner)) = chars.next() {
                    if inner == '*' && chars.peek().map(|&(_, n)| n) == Some('/') {
                        chars.next();
                        out.push_str("  ");
                        closed = true;
                        break;
                    }
                    out.push(blank(inner));
                }
                if !closed {
                    return Err(line_column(text, pos));
                }
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// What a comment character becomes: newlines stay (line numbers), everything else a space.
fn blank(c: char) -> char {
    if c == '\n' || c == '\r' {
        c
    } else {
        ' '
    }
}

/// 1-based line and column (in characters) of byte offset `pos`.
fn line_column(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Parses one schema file's text, dropping warnings (see [`parse_schema`]). `file` is the bare
/// file name used in errors.
pub fn parse_message(file: &str, text: &str) -> Result<MessageSpec, SchemaErrors> {
    parse_schema(file, text).map(|(spec, _)| spec)
}

/// Parses one schema file's text, with the legacy allowances it needed as warnings.
///
/// Duplicate keys are accepted, the last one winning, as Kafka's Jackson parser does (two files
/// of Kafka's corpus repeat `versions`). Unknown keys are all reported, each with its JSON path.
/// Text after the top-level object is ignored with a warning, as Jackson ignores trailing tokens
/// (Kafka 2.8.0's `DescribeProducersRequest.json` ends with one `}` too many).
pub fn parse_schema(file: &str, text: &str) -> Result<(MessageSpec, Vec<SchemaWarning>), SchemaErrors> {
    let stripped = strip_comments(text).map_err(|(line, column)| {
        SchemaError::new(
            file,
            format!("line {line}, column {column}"),
            None,
            "block comment `/*` is never closed with `*/`",
        )
    })?;
    if stripped.trim().is_empty() {
        return Err(SchemaError::new(file, "line 1, column 1", None, "invalid JSON: no value").into());
    }
    let (value, end) = json::parse_prefix(&stripped).map_err(|e| json_error(file, &e))?;
    let mut warnings = Vec::new();
    let rest = &stripped[end..];
    if let Some(extra) = rest.find(|c: char| !c.is_whitespace()) {
        let (line, column) = line_column(&stripped, end + extra);
        warnings.push(SchemaWarning {
            file: file.to_owned(),
            path: format!("line {line}, column {column}"),
            message: "text after the top-level object, which Kafka's generator (Jackson) ignores \
                      (Kafka 2.8.0's DescribeProducersRequest.json has one `}` too many)"
                .to_owned(),
            rule: None,
        });
    }
    let mut errors = Vec::new();
    check_keys(file, &value, &mut errors);
    if !errors.is_empty() {
        return Err(SchemaErrors(errors));
    }
    let mut spec = MessageSpec::from_value(&value)
        .map_err(|e| SchemaError::new(file, e.path, None, format!("invalid schema: {}", e.message)))?;
    spec.history = history_comments(text, &stripped);
    Ok((spec, warnings))
}

/// The `//` comments inside the top-level object before its `"fields"` key, where Kafka's
/// schemas keep their version history ("Version 3 adds MaxBytes."), as paragraphs (an empty
/// `//` line separates them). The licence header, before the object, is not among them.
/// `stripped` is `text` with comments blanked, line for line.
pub fn history_comments(text: &str, stripped: &str) -> Vec<String> {
    let code_lines: Vec<&str> = stripped.lines().collect();
    let Some(open) = code_lines.iter().position(|l| l.contains('{')) else { return Vec::new() };
    let end = code_lines.iter().position(|l| l.contains("\"fields\"")).unwrap_or(code_lines.len());
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    for line in text.lines().take(end).skip(open + 1) {
        let Some(comment) = line.trim_start().strip_prefix("//") else { continue };
        let comment = comment.trim();
        if comment.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            continue;
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(comment);
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs
}

fn json_error(file: &str, e: &json::JsonError) -> SchemaError {
    SchemaError::new(
        file,
        format!("line {}, column {}", e.line, e.column),
        None,
        format!("invalid JSON: {}", e.message),
    )
}

/// Reports every key that Kafka's schema dialect does not have, naming it and its JSON path.
fn check_keys(file: &str, value: &Value, errors: &mut Vec<SchemaError>) {
    let Some(top) = value.as_object() else {
        errors.push(SchemaError::new(file, "$", None, "a schema must be a JSON object"));
        return;
    };
    unknown_keys(file, "$", "message", top, MESSAGE_KEYS, errors);
    if let Some(fields) = top.get("fields") {
        check_field_keys(file, "$", fields, errors);
    }
    if let Some(Value::Array(structs)) = top.get("commonStructs") {
        for (i, s) in structs.iter().enumerate() {
            let base = format!("$.commonStructs[{i}]");
            if let Some(obj) = s.as_object() {
                let path = named(&base, obj);
                unknown_keys(file, &path, "common struct", obj, STRUCT_KEYS, errors);
                if let Some(fields) = obj.get("fields") {
                    check_field_keys(file, &base, fields, errors);
                }
            }
        }
    }
}

fn check_field_keys(file: &str, base: &str, fields: &Value, errors: &mut Vec<SchemaError>) {
    let Value::Array(fields) = fields else { return };
    for (i, f) in fields.iter().enumerate() {
        let fbase = format!("{base}.fields[{i}]");
        if let Some(obj) = f.as_object() {
            let path = named(&fbase, obj);
            unknown_keys(file, &path, "field", obj, FIELD_KEYS, errors);
            if let Some(nested) = obj.get("fields") {
                check_field_keys(file, &fbase, nested, errors);
            }
        }
    }
}

fn unknown_keys(file: &str, path: &str, what: &str, obj: &Map, known: &[&str], errors: &mut Vec<SchemaError>) {
    for key in obj.keys() {
        if !known.contains(&key.as_str()) {
            errors.push(SchemaError::new(
                file,
                path,
                None,
                format!("unknown key `{key}` in {what}; expected one of: {}", known.join(", ")),
            ));
        }
    }
}

/// `base (name)` when the object has a string `name`.
fn named(base: &str, obj: &Map) -> String {
    match obj.get("name").and_then(Value::as_str) {
        Some(n) => format!("{base} ({n})"),
        None => base.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_history_is_the_comments_inside_the_object_before_its_fields() {
        let text = "// Licensed to the ASF\n//\n// License text.\n{\n  \"name\": \"X\",\n  //\n  // Version 1 adds\n  // Foo.\n  //\n  // Version 2 is the same.\n  \"fields\": [\n    // a field note\n  ]\n}\n";
        let stripped = strip_comments(text).unwrap();
        assert_eq!(history_comments(text, &stripped), ["Version 1 adds Foo.", "Version 2 is the same."]);
        assert!(history_comments("{ \"fields\": [] }", "{ \"fields\": [] }").is_empty());
    }

    #[test]
    fn line_comments_are_blanked_but_lines_kept() {
        let s = strip_comments("{ // hello\n \"a\": 1 }").unwrap();
        assert_eq!(s, "{         \n \"a\": 1 }");
    }

    #[test]
    fn block_comments_are_blanked_across_lines() {
        let s = strip_comments("/** x\n y **/{}").unwrap();
        assert_eq!(s, "     \n      {}");
    }

    #[test]
    fn comment_markers_inside_strings_are_kept() {
        let text = r#"{"about": "see http://x/*y*/ and \"//quoted\" \\"} // tail"#;
        let s = strip_comments(text).unwrap();
        assert!(s.starts_with(r#"{"about": "see http://x/*y*/ and \"//quoted\" \\"}"#));
        let v: Value = json::parse(&s).unwrap();
        assert_eq!(v.as_object().unwrap()["about"].as_str(), Some(r#"see http://x/*y*/ and "//quoted" \"#));
    }

    #[test]
    fn unclosed_block_comment_reports_its_start() {
        assert_eq!(strip_comments("{\n  /* open"), Err((2, 3)));
    }

    #[test]
    fn block_comment_inside_line_comment_is_ignored() {
        let s = strip_comments("// a /* b\n{}").unwrap();
        assert_eq!(s.trim(), "{}");
    }

    #[test]
    fn syntax_errors_name_file_line_and_column() {
        let e = parse_message("X.json", "{\n  \"name\": \"X\",\n  \"bogus\" 1\n}").unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e.0[0].file, "X.json");
        assert_eq!(e.0[0].path, "line 3, column 11");
    }

    #[test]
    fn every_unknown_key_is_reported_with_its_path() {
        let text = r#"{"name": "X", "bogus": 1, "fields": [
            {"name": "A", "type": "[]B", "versions": "0+", "fields": [
                {"name": "C", "type": "int8", "versions": "0+", "nullable": true}]}],
            "commonStructs": [{"name": "D", "versions": "0+", "extra": 1, "fields": []}]}"#;
        let e = parse_message("X.json", text).unwrap_err();
        let shown: Vec<String> = e.iter().map(|e| format!("{}: {}", e.path, e.message)).collect();
        assert_eq!(shown.len(), 3, "{shown:?}");
        assert!(shown[0].starts_with("$: unknown key `bogus` in message"), "{shown:?}");
        assert!(shown[1].starts_with("$.fields[0].fields[0] (C): unknown key `nullable` in field"), "{shown:?}");
        assert!(shown[2].starts_with("$.commonStructs[0] (D): unknown key `extra` in common struct"), "{shown:?}");
    }

    #[test]
    fn key_lists_match_the_typed_model() {
        // Every listed key is accepted and read by the typed model.
        let field = r#"{"name": "F", "type": "[]S", "versions": "0+", "nullableVersions": "0+",
            "taggedVersions": "0+", "tag": 0, "default": "null", "ignorable": true, "mapKey": false,
            "entityType": "topicName", "zeroCopy": false, "flexibleVersions": "none",
            "about": "a", "fields": []}"#;
        let text = format!(
            r#"{{"apiKey": 1, "type": "request", "name": "R", "validVersions": "0",
            "flexibleVersions": "0+", "deprecatedVersions": "none", "latestVersionUnstable": false,
            "listeners": ["broker"], "fields": [{field}],
            "commonStructs": [{{"name": "S", "versions": "0+", "fields": []}}]}}"#
        );
        let v: Value = json::parse(&text).unwrap();
        assert_eq!(v.as_object().unwrap().len(), MESSAGE_KEYS.len());
        let first = |key: &str| match &v.as_object().unwrap()[key] {
            Value::Array(items) => items[0].as_object().unwrap().len(),
            other => panic!("{key}: {other:?}"),
        };
        assert_eq!(first("fields"), FIELD_KEYS.len());
        assert_eq!(first("commonStructs"), STRUCT_KEYS.len());
        let spec = parse_message("R.json", &text).unwrap();
        let f = &spec.fields[0];
        assert_eq!((spec.api_key, spec.kind.as_deref(), spec.name.as_deref()), (Some(1), Some("request"), Some("R")));
        assert_eq!(
            (spec.valid_versions.as_deref(), spec.flexible_versions.as_deref(), spec.deprecated_versions.as_deref()),
            (Some("0"), Some("0+"), Some("none"))
        );
        assert_eq!(
            (spec.latest_version_unstable, spec.listeners.as_deref()),
            (Some(false), Some(&["broker".to_owned()][..]))
        );
        assert_eq!((f.name.as_deref(), f.ty.as_deref(), f.versions.as_deref()), (Some("F"), Some("[]S"), Some("0+")));
        assert_eq!(
            (f.nullable_versions.as_deref(), f.tagged_versions.as_deref(), f.tag),
            (Some("0+"), Some("0+"), Some(0))
        );
        assert_eq!(
            (f.default.as_deref(), f.ignorable, f.map_key, f.zero_copy),
            (Some("null"), Some(true), Some(false), Some(false))
        );
        assert_eq!(
            (f.entity_type.as_deref(), f.flexible_versions.as_deref(), f.about.as_deref()),
            (Some("topicName"), Some("none"), Some("a"))
        );
        assert_eq!(f.fields.as_ref().map(Vec::len), Some(0));
        let s = &spec.common_structs[0];
        assert_eq!((s.name.as_deref(), s.versions.as_deref(), s.fields.len()), (Some("S"), Some("0+"), 0));
    }

    #[test]
    fn type_errors_carry_their_json_path() {
        let e = parse_message("X.json", "{\n  \"name\": \"X\",\n  \"apiKey\": \"two\"\n}").unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e.0[0].path, "$.apiKey");
        assert_eq!(e.0[0].message, "invalid schema: invalid type: string \"two\", expected an i16");
        let text = r#"{"name": "X", "fields": [{"name": "A", "versions": "0+", "fields": [
            {"name": "B", "versions": ["0+"]}]}]}"#;
        let e = parse_message("X.json", text).unwrap_err();
        assert_eq!(e.0[0].path, "$.fields[0].fields[0] (B).versions");
        assert_eq!(e.0[0].message, "invalid schema: invalid type: sequence, expected a string, number or boolean");
    }

    #[test]
    fn coerced_spellings_are_read_as_kafka_reads_them() {
        let text = r#"{"name": "X", "validVersions": 3, "fields": [
            {"name": "A", "type": "int32", "versions": "0+", "tag": "7", "default": -1, "ignorable": "true"},
            {"name": "B", "type": "bool", "versions": "0+", "default": false, "mapKey": null, "about": null}]}"#;
        let spec = parse_message("X.json", text).unwrap();
        let (a, b) = (&spec.fields[0], &spec.fields[1]);
        assert_eq!(spec.valid_versions.as_deref(), Some("3"));
        assert_eq!((a.tag, a.default.as_deref(), a.ignorable), (Some(7), Some("-1"), Some(true)));
        assert_eq!((b.default.as_deref(), b.map_key, b.about.as_deref()), (Some("false"), None, None));
        let e = parse_message("X.json", r#"{"name": "X", "fields": [{"name": "A", "tag": "x"}]}"#).unwrap_err();
        assert_eq!(e.0[0].path, "$.fields[0] (A).tag");
        let e = parse_message("X.json", r#"{"name": "X", "latestVersionUnstable": "yes"}"#).unwrap_err();
        assert_eq!(e.0[0].message, "invalid schema: invalid type: string \"yes\", expected true or false");
    }

    #[test]
    fn trailing_text_after_the_object_is_a_warning() {
        let (spec, warnings) = parse_schema("X.json", "{\"name\": \"X\"}\n}\n").unwrap();
        assert_eq!(spec.name.as_deref(), Some("X"));
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].path, "line 2, column 1");
        assert!(warnings[0].message.contains("text after the top-level object"), "{}", warnings[0]);
        let (_, none) = parse_schema("X.json", "{\"name\": \"X\"} // done\n\n").unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn duplicate_keys_last_one_wins() {
        let m = parse_message("X.json", r#"{"name": "X", "validVersions": "0", "validVersions": "1"}"#).unwrap();
        assert_eq!(m.valid_versions.as_deref(), Some("1"));
    }
}
