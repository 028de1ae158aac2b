//! Rust types, default values and element sizes for schema field types.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::names::type_ident;
use super::EmitOptions;
use crate::ir::{DefaultValue, Field, FieldType};

/// The runtime newtype that a field's values (or array elements) are wrapped in, if any:
/// `TopicName`, `GroupId`, `TransactionalId`, `BrokerId` and `ProducerId` for the schema's
/// `entityType`s, `ErrorCode` for `int16` fields named `...ErrorCode`. All are
/// `#[repr(transparent)]` over the wire value. `None` under `plain_types`, and for an
/// `entityType` the runtime has no type for (a user's own), which keeps the plain type.
pub fn newtype(field: &Field, options: &EmitOptions, rt: &TokenStream) -> Option<TokenStream> {
    if options.plain_types {
        return None;
    }
    let scalar = match &field.ty {
        FieldType::Array(inner) => inner.as_ref(),
        ty => ty,
    };
    let name = match (field.entity_type.as_deref(), scalar) {
        (Some("topicName"), FieldType::String) => "TopicName",
        (Some("groupId"), FieldType::String) => "GroupId",
        (Some("transactionalId"), FieldType::String) => "TransactionalId",
        (Some("brokerId"), FieldType::Int32) => "BrokerId",
        (Some("producerId"), FieldType::Int64) => "ProducerId",
        (_, FieldType::Int16) if is_error_code(field) => "ErrorCode",
        _ => return None,
    };
    let ident = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
    Some(quote!(#rt::#ident))
}

/// Whether the field holds Kafka error codes: an `int16` (or array of them) named `...ErrorCode`.
pub fn is_error_code(field: &Field) -> bool {
    let scalar = match &field.ty {
        FieldType::Array(inner) => inner.as_ref(),
        ty => ty,
    };
    *scalar == FieldType::Int16 && field.name.ends_with("ErrorCode")
}

/// Whether the Rust field is an `Option`: nullable in some version, or defaulting to null.
pub fn is_option(field: &Field) -> bool {
    field.nullable_versions.is_some() || matches!(field.default, DefaultValue::Null)
}

/// The Rust type of one value of `ty` (not wrapped in `Option`); scalars are `wrap`ped in
/// their newtype when the field has one.
pub fn value_type(ty: &FieldType, rt: &TokenStream, wrap: Option<&TokenStream>) -> TokenStream {
    if let (Some(w), false) = (wrap, ty.is_array()) {
        return w.clone();
    }
    match ty {
        FieldType::Bool => quote!(bool),
        FieldType::Int8 => quote!(i8),
        FieldType::Int16 => quote!(i16),
        FieldType::Uint16 => quote!(u16),
        FieldType::Int32 => quote!(i32),
        FieldType::Uint32 => quote!(u32),
        FieldType::Int64 => quote!(i64),
        FieldType::Float64 => quote!(f64),
        FieldType::String => quote!(#rt::StrBytes),
        FieldType::Bytes => quote!(#rt::Bytes),
        FieldType::Uuid => quote!(#rt::Uuid),
        FieldType::Records => quote!(#rt::Records),
        FieldType::Struct(name) => {
            let t = type_ident(name);
            quote!(#t)
        }
        // Fixed-width values stay in their wire form: decoding shares the input.
        FieldType::Array(inner) if inner.fixed_size().is_some() => {
            let t = value_type(inner, rt, wrap);
            quote!(#rt::FixedArray<#t>)
        }
        FieldType::Array(inner) => {
            let t = value_type(inner, rt, wrap);
            quote!(Vec<#t>)
        }
    }
}

/// The Rust type of the field.
pub fn field_type(field: &Field, rt: &TokenStream, wrap: Option<&TokenStream>) -> TokenStream {
    let t = value_type(&field.ty, rt, wrap);
    if is_option(field) {
        quote!(Option<#t>)
    } else {
        t
    }
}

fn int_literal(ty: &FieldType, v: i64) -> TokenStream {
    let lit = match ty {
        FieldType::Int8 => Literal::i8_suffixed(v as i8),
        FieldType::Int16 => Literal::i16_suffixed(v as i16),
        FieldType::Uint16 => Literal::u16_suffixed(v as u16),
        FieldType::Int32 => Literal::i32_suffixed(v as i32),
        FieldType::Uint32 => Literal::u32_suffixed(v as u32),
        _ => Literal::i64_suffixed(v),
    };
    quote!(#lit)
}

/// The default value of the field, as an expression of the field's Rust type.
pub fn default_expr(field: &Field, rt: &TokenStream, wrap: Option<&TokenStream>) -> TokenStream {
    let scalar = match (&field.default, &field.ty) {
        (DefaultValue::Null, _) => return quote!(None),
        (DefaultValue::Implicit, FieldType::Records) if is_option(field) => return quote!(None),
        (DefaultValue::Bool(b), _) => quote!(#b),
        (DefaultValue::Int(v), ty) => int_literal(ty, *v),
        (DefaultValue::Float(f), _) => {
            let lit = Literal::f64_suffixed(*f);
            quote!(#lit)
        }
        (DefaultValue::Str(s), FieldType::String) => quote!(#rt::StrBytes::from_static_str(#s)),
        (DefaultValue::Uuid(raw), _) => {
            let bytes = raw.iter();
            quote!(#rt::Uuid::from_bytes([#(#bytes),*]))
        }
        (_, ty) => implicit_default(ty, rt),
    };
    let value = match wrap {
        Some(w) if !field.ty.is_array() => quote!(#w(#scalar)),
        _ => scalar,
    };
    if is_option(field) {
        quote!(Some(#value))
    } else {
        value
    }
}

fn implicit_default(ty: &FieldType, rt: &TokenStream) -> TokenStream {
    match ty {
        FieldType::Bool => quote!(false),
        FieldType::Float64 => quote!(0.0),
        FieldType::Int8
        | FieldType::Int16
        | FieldType::Uint16
        | FieldType::Int32
        | FieldType::Uint32
        | FieldType::Int64 => int_literal(ty, 0),
        FieldType::String => quote!(#rt::StrBytes::from_static_str("")),
        FieldType::Bytes => quote!(#rt::Bytes::new()),
        FieldType::Uuid => quote!(#rt::Uuid::nil()),
        FieldType::Records => quote!(#rt::Records::default()),
        FieldType::Struct(name) => {
            let t = type_ident(name);
            quote!(#t::default())
        }
        FieldType::Array(inner) if inner.fixed_size().is_some() => quote!(#rt::FixedArray::new()),
        FieldType::Array(_) => quote!(Vec::new()),
    }
}
