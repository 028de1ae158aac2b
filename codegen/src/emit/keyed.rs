//! `Keyed` for structs with `mapKey` fields: what `KeyedSlice::by_key` compares.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::names::type_ident;
use super::types::{field_type, is_option};
use crate::ir::{Field, FieldType};

/// One key field: its Rust name, schema field and newtype.
pub struct KeyField<'a> {
    pub ident: &'a Ident,
    pub field: &'a Field,
    pub wrap: Option<&'a TokenStream>,
}

/// `impl Keyed` for the struct `name`, or nothing when it has no key field.
pub fn emit_keyed(name: &str, keys: &[KeyField<'_>], rt: &TokenStream) -> TokenStream {
    if keys.is_empty() {
        return quote!();
    }
    let parts: Vec<(TokenStream, TokenStream)> = keys.iter().map(|k| key_part(k, rt)).collect();
    let (types, exprs): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    let (ty, expr) = match (types.as_slice(), exprs.as_slice()) {
        ([t], [e]) => (t.clone(), e.clone()),
        _ => (quote!((#(#types),*)), quote!((#(#exprs),*))),
    };
    let struct_ty = type_ident(name);
    quote! {
        impl #rt::Keyed for #struct_ty {
            type Key<'a> = #ty;
            fn key(&self) -> Self::Key<'_> {
                #expr
            }
        }
    }
}

/// The key type (with lifetime `'a`) and the expression borrowing it from `self`.
fn key_part(k: &KeyField<'_>, rt: &TokenStream) -> (TokenStream, TokenStream) {
    let ident = k.ident;
    match (&k.field.ty, is_option(k.field)) {
        (FieldType::String, false) => (quote!(&'a str), quote!(self.#ident.as_str())),
        (FieldType::String, true) => (quote!(Option<&'a str>), quote!(self.#ident.as_deref())),
        (ty, _) if ty.fixed_size().is_some() => (field_type(k.field, rt, k.wrap), quote!(self.#ident)),
        _ => {
            let t = field_type(k.field, rt, k.wrap);
            (quote!(&'a #t), quote!(&self.#ident))
        }
    }
}
