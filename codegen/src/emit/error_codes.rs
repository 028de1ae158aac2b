//! `for_each_error_code`: every `ErrorCode` a value holds, nested ones included, without
//! formatting or copying anything else (a Fetch response's records are never touched). Tools
//! that watch traffic for errors (`kwire tap`) read them through it.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::cond::Cond;
use super::names::field_ident;
use super::types::{is_error_code, is_option};
use super::EmitOptions;
use crate::ir::{Field, FieldType, Message, Versions};

/// How deep the search for error codes follows struct fields (see `ir::layout`'s own bound).
const MAX_NESTING: usize = 64;

/// Whether a value of `fields` can hold an error code, at any depth.
pub fn holds_error_codes(msg: &Message, fields: &[Field], options: &EmitOptions) -> bool {
    !options.plain_types && fields.iter().any(|f| field_holds(msg, f, 0))
}

fn field_holds(msg: &Message, field: &Field, depth: usize) -> bool {
    if is_error_code(field) {
        return true;
    }
    match field.ty.struct_name().and_then(|name| msg.structs.iter().find(|s| s.name == name)) {
        Some(s) if depth < MAX_NESTING => s.fields.iter().any(|f| field_holds(msg, f, depth + 1)),
        _ => false,
    }
}

/// The inherent method of a struct that holds error codes (nothing for one that does not).
pub fn emit_visitor(
    msg: &Message,
    fields: &[Field],
    within: Versions,
    options: &EmitOptions,
    rt: &TokenStream,
) -> TokenStream {
    if !holds_error_codes(msg, fields, options) {
        return quote!();
    }
    let mut uses_version = false;
    let visits: Vec<TokenStream> = fields
        .iter()
        .filter(|f| field_holds(msg, f, 0))
        .map(|field| {
            let ident = field_ident(&field.name);
            uses_version |= field.ty != FieldType::Int16;
            let body = if is_option(field) {
                let visit = visit_value(&field.ty, quote!(v));
                quote!(if let Some(v) = &self.#ident { #visit })
            } else {
                visit_value(&field.ty, quote!(self.#ident))
            };
            // A field outside its versions holds its default, which the wire never carried.
            let cond = Cond::new(Some(field.versions), within);
            uses_version |= matches!(cond, Cond::Test(_));
            cond.branch(body, quote!())
        })
        .collect();
    let version = if uses_version { quote!(version) } else { quote!(_version) };
    quote! {
        /// Calls `f` with every error code this value holds at `version`, nested ones included.
        pub fn for_each_error_code(&self, #version: i16, f: &mut dyn FnMut(#rt::ErrorCode)) {
            #(#visits)*
        }
    }
}

/// Statements visiting `value`, a place or a reference holding a value of `ty` (a scalar code
/// is never optional, so it is always a place).
fn visit_value(ty: &FieldType, value: TokenStream) -> TokenStream {
    match ty {
        FieldType::Int16 => quote!(f(#value);),
        FieldType::Array(inner) if inner.fixed_size().is_some() => quote!(for code in #value.iter() { f(code); }),
        FieldType::Array(_) => quote!(for el in #value.iter() { el.for_each_error_code(version, f); }),
        _ => quote!(#value.for_each_error_code(version, f);),
    }
}

/// `ResponseKind::for_each_error_code`, dispatching to each response that holds error codes.
pub fn emit_dispatch(responses: &[(&Ident, &Message)], options: &EmitOptions) -> TokenStream {
    let holding: Vec<_> = responses.iter().filter(|(_, msg)| holds_error_codes(msg, &msg.fields, options)).collect();
    if holding.is_empty() {
        return quote!();
    }
    let rest = if holding.len() == responses.len() { quote!() } else { quote!(_ => {}) };
    let arms =
        holding.iter().map(|(variant, _)| quote!(ResponseKind::#variant(b) => b.for_each_error_code(version, f),));
    quote! {
        impl ResponseKind {
            /// Calls `f` with every error code the response holds at `version` (top-level,
            /// per topic, per partition, ...): what a tool watching for errors reads, without
            /// converting the response to anything.
            pub fn for_each_error_code(&self, version: i16, f: &mut dyn FnMut(rt::ErrorCode)) {
                match self {
                    #(#arms)*
                    #rest
                }
            }
        }
    }
}
