//! Schema errors and warnings: what is wrong, where (file and JSON path), and which of Kafka's
//! rules it breaks.

use std::fmt;

use crate::rules::Rule;

/// One problem found in one schema file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SchemaError {
    /// Bare file name, e.g. `FetchRequest.json` (never a directory, so output is reproducible).
    pub file: String,
    /// Where in the file: a JSON path such as `$.fields[3].fields[0] (Topics)`, or
    /// `line 12, column 7` for errors found while reading the JSON text.
    pub path: String,
    /// The schema rule broken (1..=37, see [`Rule`]), if any.
    pub rule: Option<u8>,
    /// What is wrong, naming the field or struct involved.
    pub message: String,
}

impl SchemaError {
    pub fn new(file: impl Into<String>, path: impl Into<String>, rule: Option<u8>, message: impl Into<String>) -> Self {
        SchemaError { file: file.into(), path: path.into(), rule, message: message.into() }
    }

    /// A problem with a schema folder itself (missing, unreadable, empty): no file, no path.
    pub fn folder(message: impl Into<String>) -> Self {
        Self::new("", "", None, message)
    }

    /// Whether this is about a folder rather than a schema in it.
    pub fn is_folder(&self) -> bool {
        self.file.is_empty() && self.path.is_empty()
    }

    /// An error for rule `rule`.
    pub fn rule(file: impl Into<String>, path: impl Into<String>, rule: u8, message: impl Into<String>) -> Self {
        Self::new(file, path, Some(rule), message)
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_folder() {
            return f.write_str(&self.message);
        }
        write!(f, "{}: {}: {}", self.file, self.path, self.message)?;
        match self.rule.and_then(Rule::new) {
            Some(rule) => write!(f, " ({rule})"),
            None => match self.rule {
                Some(n) => write!(f, " (rule {n})"),
                None => Ok(()),
            },
        }
    }
}

impl std::error::Error for SchemaError {}

/// Something a schema does that Kafka's own generator of some release accepted but current
/// schema authoring does not: accepted (so older releases' corpora generate), never silently.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SchemaWarning {
    /// Bare file name, as in [`SchemaError::file`].
    pub file: String,
    /// Where in the file, as in [`SchemaError::path`].
    pub path: String,
    /// What the schema does, how it is read, and which Kafka releases accepted it.
    pub message: String,
    /// The rule it would break under `--strict`, if it is one of the numbered rules.
    pub rule: Option<u8>,
}

impl SchemaWarning {
    /// The error this warning becomes under `--strict`.
    pub fn into_error(self) -> SchemaError {
        SchemaError { file: self.file, path: self.path, rule: self.rule, message: self.message }
    }
}

impl fmt::Display for SchemaWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.path, self.message)
    }
}

/// Every problem found in a run, reported together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaErrors(pub Vec<SchemaError>);

impl SchemaErrors {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, SchemaError> {
        self.0.iter()
    }

    /// `Ok(value)` when no error was collected, otherwise all of them.
    pub fn into_result<T>(self, value: T) -> Result<T, SchemaErrors> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl From<SchemaError> for SchemaErrors {
    fn from(e: SchemaError) -> Self {
        SchemaErrors(vec![e])
    }
}

impl From<Vec<SchemaError>> for SchemaErrors {
    fn from(v: Vec<SchemaError>) -> Self {
        SchemaErrors(v)
    }
}

impl IntoIterator for SchemaErrors {
    type Item = SchemaError;
    type IntoIter = std::vec::IntoIter<SchemaError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a SchemaErrors {
    type Item = &'a SchemaError;
    type IntoIter = std::slice::Iter<'a, SchemaError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for SchemaErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SchemaErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_path_message_and_rule() {
        let e = SchemaError::rule("FooRequest.json", "$.fields[2] (Bar)", 13, "tag 1 is used twice");
        assert_eq!(
            e.to_string(),
            "FooRequest.json: $.fields[2] (Bar): tag 1 is used twice (rule 13: tags are unique within a struct)"
        );
        let e = SchemaError::new("X.json", "line 1, column 2", None, "invalid JSON");
        assert_eq!(e.to_string(), "X.json: line 1, column 2: invalid JSON");
    }

    #[test]
    fn all_errors_are_listed_one_per_line() {
        let errors = SchemaErrors(vec![
            SchemaError::rule("A.json", "$", 1, "first"),
            SchemaError::rule("B.json", "$", 2, "second"),
        ]);
        assert_eq!(
            errors.to_string(),
            "A.json: $: first (rule 1: a message needs `flexibleVersions`)\nB.json: $: second (rule 2: \
             `flexibleVersions` is `none` or an open-ended range `N+`)"
        );
        assert_eq!(errors.clone().into_result(()), Err(errors));
        assert_eq!(SchemaErrors::default().into_result(7), Ok(7));
    }
}
