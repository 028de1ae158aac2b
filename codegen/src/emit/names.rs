//! Rust names for schema names: snake_case fields and files, PascalCase types, keywords escaped.

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, Span};

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
    "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// A field name as a Rust identifier: `ClusterId` → `cluster_id`, `Type` → `r#type`.
pub fn field_ident(schema_name: &str) -> Ident {
    ident(&schema_name.to_snake_case())
}

/// A struct name as a Rust type identifier.
pub fn type_ident(schema_name: &str) -> Ident {
    ident(&schema_name.to_upper_camel_case())
}

/// The module and file stem for a schema: `FetchRequest` → `fetch_request`.
pub fn module_name(schema_name: &str) -> String {
    schema_name.to_snake_case()
}

fn ident(name: &str) -> Ident {
    match name {
        // `self`, `Self`, `super`, `crate` cannot be raw identifiers.
        "self" | "Self" | "super" | "crate" => Ident::new(&format!("{name}_"), Span::call_site()),
        _ if KEYWORDS.contains(&name) => Ident::new_raw(name, Span::call_site()),
        _ => Ident::new(name, Span::call_site()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(field_ident("ClusterId").to_string(), "cluster_id");
        assert_eq!(field_ident("Type").to_string(), "r#type");
        assert_eq!(field_ident("Self").to_string(), "self_");
        assert_eq!(type_ident("MyStruct2").to_string(), "MyStruct2");
    }
}
