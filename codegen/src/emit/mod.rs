//! Emission: IR → Rust tokens, one file per schema plus an index.

mod cond;
mod error_codes;
mod index;
mod json;
mod keyed;
pub mod names;
mod split;
mod structs;
mod types;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::ir::{Message, Versions};
use names::type_ident;
use structs::StructCtx;

pub use index::{emit_index, IndexLayout};
pub use split::{IndexScope, MessagePart};

/// Choices that change what is emitted (where it goes is the `Config`'s business).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmitOptions {
    /// Offer a schema's unstable latest version (`latestVersionUnstable`) to brokers in
    /// version negotiation; by default it is left out, as Kafka's clients do.
    pub unstable_versions: bool,
    /// Plain `i16`/`i32`/`i64`/`StrBytes` fields instead of the runtime's typed ids and
    /// `ErrorCode` (see `types::newtype`).
    pub plain_types: bool,
    /// Kafka-style JSON converters (`rt::json::Json`) for every struct; the runtime must
    /// be built with its `json` feature.
    pub json: bool,
}

/// Tokens for one schema's file: the message struct, its nested and common structs, and
/// its `Message` impl. `rt` is the path of the runtime's `__codegen` module.
pub fn emit_message(msg: &Message, runtime_path: &TokenStream, options: &EmitOptions) -> TokenStream {
    let rt = quote!(rt);
    let root = StructCtx {
        rt: &rt,
        options,
        msg,
        name: &msg.name,
        fields: &msg.fields,
        within: msg.valid_versions,
        is_root: true,
    }
    .emit();
    let nested = msg.structs.iter().map(|s| {
        let within = s.versions.intersect(&msg.valid_versions).unwrap_or(msg.valid_versions);
        StructCtx { rt: &rt, options, msg, name: &s.name, fields: &s.fields, within, is_root: false }.emit()
    });
    let ty = type_ident(&msg.name);
    let valid = range_lit(msg.valid_versions);
    let flexible = opt_range_lit(msg.flexible_versions);
    let deprecated = opt_range_lit(msg.deprecated_versions);
    quote! {
        use #runtime_path as rt;
        use rt::WithinPath as _;

        #root
        #(#nested)*

        impl rt::Message for #ty {
            const NAME: &'static str = #ty::NAME;
            const VALID_VERSIONS: rt::VersionRange = #valid;
            const FLEXIBLE_VERSIONS: Option<rt::VersionRange> = #flexible;
            const DEPRECATED_VERSIONS: Option<rt::VersionRange> = #deprecated;
        }
    }
}

/// `rt::VersionRange::new(a, b)`, or `rt::VersionRange::at_least(a)` for Kafka's `"a+"`.
pub(crate) fn range_lit(v: Versions) -> TokenStream {
    let a = Literal::i16_unsuffixed(v.min);
    if v.is_open_ended() {
        return quote!(rt::VersionRange::at_least(#a));
    }
    let b = Literal::i16_unsuffixed(v.max);
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
