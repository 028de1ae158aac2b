//! The JSON of Kafka's schema files, read into a [`Value`]: a small reader of our own, because
//! the engine is a build dependency of every crate that generates messages, and serde_json with
//! serde_core was about a tenth of such a clean build (3.4 s of CPU here) for a dialect this
//! plain. Object keys are kept sorted and a repeated key's last value wins, as Kafka's Jackson
//! parser (and serde_json's `Value`) do; [`parse_prefix`] stops after the first value and says
//! where, so the caller decides about text after it. Errors carry line and column.

use std::collections::BTreeMap;
use std::fmt;

/// A JSON object: keys sorted, each once.
pub type Map = BTreeMap<String, Value>;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// A JSON number: an integer when it is one and fits, else a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl Number {
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(i),
            Number::UInt(u) => i64::try_from(u).ok(),
            Number::Float(_) => None,
        }
    }

    pub fn as_u64(self) -> Option<u64> {
        match self {
            Number::Int(i) => u64::try_from(i).ok(),
            Number::UInt(u) => Some(u),
            Number::Float(_) => None,
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        Some(match self {
            Number::Int(i) => i as f64,
            Number::UInt(u) => u as f64,
            Number::Float(f) => f,
        })
    }

    pub fn is_f64(self) -> bool {
        matches!(self, Number::Float(_))
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::UInt(u) => write!(f, "{u}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// Text that is not JSON: what was wrong, and where (1-based line and column, counted in
/// characters; at the end of the text, the column of its last character).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at line {} column {}", self.message, self.line, self.column)
    }
}

/// Nesting deeper than this is refused: Kafka's schemas nest a few levels, and a hostile file
/// must not exhaust the stack.
const MAX_DEPTH: usize = 128;

/// Reads the first JSON value of `text` (after any whitespace): the value, and the byte offset
/// just past it.
pub fn parse_prefix(text: &str) -> Result<(Value, usize), JsonError> {
    let mut reader = Reader { text, bytes: text.as_bytes(), at: 0, depth: 0 };
    reader.whitespace();
    let value = reader.value()?;
    Ok((value, reader.at))
}

/// Reads `text` as exactly one JSON value (whitespace around it allowed).
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let (value, end) = parse_prefix(text)?;
    let mut reader = Reader { text, bytes: text.as_bytes(), at: end, depth: 0 };
    reader.whitespace();
    if reader.at < text.len() {
        return Err(reader.error_at(reader.at, "trailing characters"));
    }
    Ok(value)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Result<Value, JsonError> {
        match self.peek() {
            None => Err(self.error_here("EOF while parsing a value")),
            Some(b'{') => self.nested(Reader::object),
            Some(b'[') => self.nested(Reader::array),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(_) => Err(self.error_at(self.at, "expected value")),
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Result<Value, JsonError>) -> Result<Value, JsonError> {
        if self.depth == MAX_DEPTH {
            return Err(self.error_at(self.at, "recursion limit exceeded"));
        }
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<Value, JsonError> {
        self.at += 1; // `{`
        let mut map = Map::new();
        self.whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.whitespace();
            match self.peek() {
                Some(b'"') => {}
                Some(b'}') => return Err(self.error_at(self.at, "trailing comma")),
                None => return Err(self.error_here("EOF while parsing an object")),
                Some(_) => return Err(self.error_at(self.at, "key must be a string")),
            }
            let key = self.string()?;
            self.whitespace();
            match self.peek() {
                Some(b':') => self.at += 1,
                None => return Err(self.error_here("EOF while parsing an object")),
                Some(_) => return Err(self.error_at(self.at, "expected `:`")),
            }
            self.whitespace();
            let value = self.value()?;
            map.insert(key, value);
            self.whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(map));
                }
                None => return Err(self.error_here("EOF while parsing an object")),
                Some(_) => return Err(self.error_at(self.at, "expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, JsonError> {
        self.at += 1; // `[`
        let mut items = Vec::new();
        self.whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.whitespace();
            if self.peek() == Some(b']') {
                return Err(self.error_at(self.at, "trailing comma"));
            }
            items.push(self.value()?);
            self.whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                None => return Err(self.error_here("EOF while parsing a list")),
                Some(_) => return Err(self.error_at(self.at, "expected `,` or `]`")),
            }
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, JsonError> {
        for expected in word.bytes() {
            match self.peek() {
                Some(b) if b == expected => self.at += 1,
                None => return Err(self.error_here("EOF while parsing a value")),
                Some(_) => return Err(self.error_at(self.at, "expected ident")),
            }
        }
        Ok(value)
    }

    fn number(&mut self) -> Result<Number, JsonError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            None => return Err(self.error_here("EOF while parsing a value")),
            Some(_) => return Err(self.error_at(self.at, "invalid number")),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error_at(self.at, "invalid number"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            float = true;
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error_at(self.at, "invalid number"));
            }
            self.digits();
        }
        let text = &self.text[start..self.at];
        if !float {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Number::Int(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Number::UInt(u));
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Number::Float(f)),
            _ => Err(self.error_at(start, "number out of range")),
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1; // `"`
        let mut out = String::new();
        loop {
            let run = self.at;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.at += 1;
            }
            // The run ends on an ASCII byte or at the end, so it is whole UTF-8.
            out.push_str(&self.text[run..self.at]);
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => {
                    return Err(
                        self.error_at(self.at, "control character (\\u0000-\\u001F) found while parsing a string")
                    )
                }
                None => return Err(self.error_here("EOF while parsing a string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let Some(b) = self.peek() else { return Err(self.error_here("EOF while parsing a string")) };
        self.at += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&first) {
                    // A high surrogate must be followed by `\u` and a low one.
                    if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                        return Err(self.error_at(self.at, "lone leading surrogate in hex escape"));
                    }
                    self.at += 2;
                    let second = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&second) {
                        return Err(self.error_at(self.at, "invalid unicode code point"));
                    }
                    0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                } else {
                    first
                };
                char::from_u32(code).ok_or_else(|| self.error_at(self.at, "invalid unicode code point"))?
            }
            _ => return Err(self.error_at(self.at - 1, "invalid escape")),
        };
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let Some(digits) = self.text.get(self.at..self.at + 4) else {
            return Err(self.error_here("EOF while parsing a string"));
        };
        let code = u32::from_str_radix(digits, 16)
            .ok()
            .filter(|_| digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error_at(self.at, "invalid escape"))?;
        self.at += 4;
        Ok(code)
    }

    /// An error about the character at byte `at`.
    fn error_at(&self, at: usize, message: &str) -> JsonError {
        let (line, column) = position(self.text, at);
        JsonError { message: message.to_owned(), line, column: column + 1 }
    }

    /// An error where reading stopped (the end of the text): the column of the last character.
    fn error_here(&self, message: &str) -> JsonError {
        let (line, column) = position(self.text, self.at.min(self.text.len()));
        JsonError { message: message.to_owned(), line, column }
    }
}

/// The 1-based line of byte `at`, and how many characters of its line come before it.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..floor_char_boundary(text, at)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
    (line, column)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect())
    }

    #[test]
    fn reads_what_kafkas_schemas_hold() {
        let text = r#"{ "apiKey": 1, "name": "Fetch\u0052equest", "tag": -2, "big": 18446744073709551615,
                       "f": 1.5e2, "ok": true, "no": null, "fields": [ { "about": "a \"quoted\" \\ word" } ] }"#;
        let value = parse(text).unwrap();
        let Value::Object(map) = &value else { panic!("{value:?}") };
        assert_eq!(map["apiKey"], Value::Number(Number::Int(1)));
        assert_eq!(map["name"].as_str(), Some("FetchRequest"));
        assert_eq!(map["tag"].as_i64(), Some(-2));
        assert_eq!(map["big"], Value::Number(Number::UInt(u64::MAX)));
        assert_eq!(map["f"], Value::Number(Number::Float(150.0)));
        assert_eq!((&map["ok"], map["no"].is_null()), (&Value::Bool(true), true));
        assert_eq!(map["fields"], Value::Array(vec![obj(&[("about", Value::String("a \"quoted\" \\ word".into()))])]));
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_and_keys_are_sorted() {
        let value = parse(r#"{ "versions": "0+", "b": 1, "versions": "1+" }"#).unwrap();
        let map = value.as_object().unwrap();
        assert_eq!(map.keys().collect::<Vec<_>>(), ["b", "versions"]);
        assert_eq!(map["versions"].as_str(), Some("1+"));
    }

    #[test]
    fn the_prefix_ends_after_the_first_value() {
        let text = "{ \"a\": [1, 2] }\n}";
        let (value, end) = parse_prefix(text).unwrap();
        assert_eq!(
            value,
            obj(&[("a", Value::Array(vec![Value::Number(Number::Int(1)), Value::Number(Number::Int(2))]))])
        );
        assert_eq!(&text[end..], "\n}");
        assert_eq!(parse(text).unwrap_err().message, "trailing characters");
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(e("{ \"name\": "), "EOF while parsing a value at line 1 column 10");
        assert_eq!(e("{\n  \"a\": 1,\n  b: 2 }"), "key must be a string at line 3 column 3");
        assert_eq!(e("[1, 2,]"), "trailing comma at line 1 column 7");
        assert_eq!(e("{\"a\" 1}"), "expected `:` at line 1 column 6");
        assert_eq!(e("[1 2]"), "expected `,` or `]` at line 1 column 4");
        assert_eq!(e("\"é\\q\""), "invalid escape at line 1 column 4");
        assert_eq!(e("\"\\ud800x\""), "lone leading surrogate in hex escape at line 1 column 8");
        assert_eq!(e("-"), "EOF while parsing a value at line 1 column 1");
        assert_eq!(e("01"), "trailing characters at line 1 column 2");
        assert_eq!(e(&"[".repeat(200)), "recursion limit exceeded at line 1 column 129");
    }

    #[test]
    fn surrogate_pairs_and_unicode_pass_through() {
        assert_eq!(parse(r#""\ud83d\ude00 é""#).unwrap(), Value::String("\u{1F600} é".into()));
    }
}
