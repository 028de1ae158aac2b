//! Kafka's schema rules, numbered as the errors cite them, each with a one-line statement so
//! that an error is understandable without any other document.

/// One of the rules Kafka's Java generator enforces on schema files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rule(u8);

impl Rule {
    /// The rule with this number, if there is one (1 to [`Rule::COUNT`]).
    pub fn new(number: u8) -> Option<Rule> {
        (1..=Self::COUNT).contains(&number).then_some(Rule(number))
    }

    /// How many rules there are.
    pub const COUNT: u8 = TEXTS.len() as u8;

    /// Every rule, in number order.
    pub fn all() -> impl Iterator<Item = Rule> {
        (1..=Self::COUNT).map(Rule)
    }

    /// The number errors cite, e.g. `13`.
    pub fn number(self) -> u8 {
        self.0
    }

    /// What the rule requires, in one line.
    pub fn text(self) -> &'static str {
        TEXTS[usize::from(self.0) - 1]
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rule {}: {}", self.0, self.text())
    }
}

const TEXTS: [&str; 37] = [
    // Messages
    "a message needs `flexibleVersions`",
    "`flexibleVersions` is `none` or an open-ended range `N+`",
    "only requests may have `listeners`, and each must be zkBroker, broker or controller",
    "only requests may set `latestVersionUnstable`",
    "`type` is required: request, response, header, data or metadata",
    "`validVersions` is required and has an upper bound",
    "top-level fields cannot be a `mapKey`",
    "a field's tagged versions lie inside the message's flexible versions",
    "a records field cannot be tagged",
    "a struct's versions overlap the versions of the field that holds it",
    // Structs
    "messages and structs need a name and versions",
    "field names are unique within a struct",
    "tags are unique within a struct",
    "the tags of a struct run from 0 without gaps",
    // Fields
    "field names are a letter followed by letters and digits",
    "a field needs `versions` unless it has `taggedVersions`",
    "the type is a primitive, a struct name or `[]` of one of these (no arrays of arrays)",
    "only string, bytes, records, struct and array fields can be nullable",
    "`entityType` matches the type: string for topicName, groupId and transactionalId, int64 for producerId, int32 for brokerId",
    "only struct and struct-array fields have nested `fields`",
    "only string and bytes fields may override `flexibleVersions`",
    "a tagged field cannot be a `mapKey`",
    "tags are not negative and fit in an int32",
    "`tag` and `taggedVersions` are given together or not at all",
    "a tagged field is nullable in all its tagged versions or in none",
    "`taggedVersions` is open-ended",
    "`taggedVersions` lie inside the field's `versions`",
    "only bytes fields may be `zeroCopy`",
    // Defaults and version ranges
    "a default is valid for its type (bool, an integer that fits, a float, 16 bytes of base64url for a uuid)",
    "a `null` default needs the field to be nullable in every version it has",
    "bytes, records, struct and array fields default only to empty or `null`",
    "version numbers are not negative",
    // Registries
    "common struct names are capitalised letters and digits",
    "each struct is defined once",
    "a struct that a field names is defined inline or in `commonStructs`",
    "each apiKey has one request and one response, named `XRequest` and `XResponse`",
    "metadata and coordinator record types (their apiKey) are unique within each kind",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_has_a_text_and_nothing_else_does() {
        assert_eq!(Rule::all().count(), 37);
        assert!(Rule::all().all(|r| !r.text().is_empty()));
        assert_eq!(Rule::new(0), None);
        assert_eq!(Rule::new(38), None);
        assert_eq!(Rule::new(13).unwrap().to_string(), "rule 13: tags are unique within a struct");
    }
}
