//! Emission: IR → Rust tokens, one file per schema plus an index.

mod cond;
mod index;
pub mod names;
mod structs;
mod types;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::ir::{Message, Versions};
use names::type_ident;
use structs::StructCtx;

pub use index::{emit_index, IndexLayout};

/// Tokens for one schema's file: the message struct, its nested and common structs, and
/// its `Message` impl. `rt` is the path of the runtime's `__codegen` module.
pub fn emit_message(msg: &Message, runtime_path: &TokenStream) -> TokenStream {
    let rt = quote!(rt);
    let root =
        StructCtx { rt: &rt, msg, name: &msg.name, fields: &msg.fields, within: msg.valid_versions, is_root: true }
            .emit();
    let nested = msg.structs.iter().map(|s| {
        let within = s.versions.intersect(&msg.valid_versions).unwrap_or(msg.valid_versions);
        StructCtx { rt: &rt, msg, name: &s.name, fields: &s.fields, within, is_root: false }.emit()
    });
    let ty = type_ident(&msg.name);
    let name = &msg.name;
    let valid = range_lit(msg.valid_versions);
    let flexible = opt_range_lit(msg.flexible_versions);
    let deprecated = opt_range_lit(msg.deprecated_versions);
    quote! {
        use #runtime_path as rt;
        use rt::WithinPath as _;

        #root
        #(#nested)*

        impl rt::Message for #ty {
            const NAME: &'static str = #name;
            const VALID_VERSIONS: rt::VersionRange = #valid;
            const FLEXIBLE_VERSIONS: Option<rt::VersionRange> = #flexible;
            const DEPRECATED_VERSIONS: Option<rt::VersionRange> = #deprecated;
        }
    }
}

/// `rt::VersionRange::new(a, b)`.
pub(crate) fn range_lit(v: Versions) -> TokenStream {
    let (a, b) = (Literal::i16_unsuffixed(v.min), Literal::i16_unsuffixed(v.max));
    quote!(rt::VersionRange::new(#a, #b))
}

/// `Some(rt::VersionRange::new(a, b))` or `None`.
pub(crate) fn opt_range_lit(v: Option<Versions>) -> TokenStream {
    match v {
        Some(v) => {
            let r = range_lit(v);
            quote!(Some(#r))
        }
        None => quote!(None),
    }
}
