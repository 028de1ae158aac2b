//! The index file: module declarations, re-exports, the `ApiKey` table, request/response
//! dispatch enums and frame helpers (when the set has headers).

use std::collections::BTreeMap;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::names::{module_name, type_ident};
use super::{opt_range_lit, range_lit};
use crate::ir::{Message, MessageKind, Retired, Versions};

/// How the index mounts the per-schema files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexLayout {
    /// `pub mod x;` beside the index (checked-in output mounted as a module folder).
    Modules,
    /// `pub mod x { include!(concat!(env!("OUT_DIR"), "/<subdir>/x.rs")); }` for build scripts.
    IncludeFromOutDir { subdir: String },
}

/// Lints allowed on generated modules, scoped to them.
fn module_allows() -> TokenStream {
    quote!(#[allow(clippy::all, clippy::pedantic, non_camel_case_types, unused_imports, unused_mut, unused_variables)])
}

struct Api<'a> {
    key: i16,
    variant: Ident,
    request: &'a Message,
    response: &'a Message,
}

/// An API whose schemas have `validVersions: "none"`: its key is reserved, it has no codec.
struct RetiredApi {
    key: i16,
    variant: Ident,
}

/// Tokens for the index over `messages` (sorted by file name) and the `retired` schemas.
pub fn emit_index(
    messages: &[Message],
    retired: &[Retired],
    layout: &IndexLayout,
    runtime_path: &TokenStream,
) -> TokenStream {
    let allows = module_allows();
    let mods = messages.iter().map(|m| {
        let module = format_ident!("{}", module_name(&m.name));
        let doc = format!(" Generated from `{}`.", m.file);
        match layout {
            IndexLayout::Modules => quote!(#[doc = #doc] #allows pub mod #module;),
            IndexLayout::IncludeFromOutDir { subdir } => {
                let path = format!("/{subdir}/{}.rs", module_name(&m.name));
                quote!(#[doc = #doc] #allows pub mod #module { include!(concat!(env!("OUT_DIR"), #path)); })
            }
        }
    });
    let uses = messages.iter().map(|m| {
        let module = format_ident!("{}", module_name(&m.name));
        let ty = type_ident(&m.name);
        quote!(pub use #module::#ty;)
    });

    let apis = pair_apis(messages);
    let retired = retired_apis(retired, &apis);
    let api_items = if apis.is_empty() { quote!() } else { emit_apis(&apis, &retired) };
    let headers =
        messages.iter().any(|m| m.name == "RequestHeader") && messages.iter().any(|m| m.name == "ResponseHeader");
    let frames = if headers && !apis.is_empty() { emit_frames() } else { quote!() };
    let rt_use = if apis.is_empty() { quote!() } else { quote!(use #runtime_path as rt;) };
    quote! {
        #rt_use
        #(#mods)*
        #(#uses)*
        #api_items
        #frames
    }
}

fn pair_apis(messages: &[Message]) -> Vec<Api<'_>> {
    let mut by_key: BTreeMap<i16, (Option<&Message>, Option<&Message>)> = BTreeMap::new();
    for m in messages {
        let Some(key) = m.api_key else { continue };
        match m.kind {
            MessageKind::Request => by_key.entry(key).or_default().0 = Some(m),
            MessageKind::Response => by_key.entry(key).or_default().1 = Some(m),
            _ => {}
        }
    }
    by_key
        .into_iter()
        .filter_map(|(key, pair)| match pair {
            (Some(request), Some(response)) => Some(Api {
                key,
                variant: format_ident!("{}", request.name.strip_suffix("Request").unwrap_or(&request.name)),
                request,
                response,
            }),
            _ => None,
        })
        .collect()
}

/// Retired requests whose key no live API uses, in key order.
fn retired_apis(retired: &[Retired], live: &[Api<'_>]) -> Vec<RetiredApi> {
    let mut by_key: BTreeMap<i16, Ident> = BTreeMap::new();
    for r in retired.iter().filter(|r| r.kind == MessageKind::Request) {
        let Some(key) = r.api_key else { continue };
        if live.iter().all(|a| a.key != key) {
            by_key.insert(key, format_ident!("{}", r.name.strip_suffix("Request").unwrap_or(&r.name)));
        }
    }
    by_key.into_iter().map(|(key, variant)| RetiredApi { key, variant }).collect()
}

fn header_version_arms(apis: &[Api<'_>], response: bool) -> Vec<TokenStream> {
    apis.iter()
        .map(|api| {
            let v = &api.variant;
            let msg = if response { api.response } else { api.request };
            let (flex, plain) = if response { (1i16, 0i16) } else { (2, 1) };
            let flexible = flexible_test(msg.flexible_versions);
            // Kafka's special cases: ControlledShutdown v0 uses request header v0 and
            // ApiVersions responses always use header v0 (KIP-511).
            let body = match (api.key, response) {
                (7, false) => quote!(if version == 0 { 0 } else if #flexible { #flex } else { #plain }),
                (18, true) => quote!(0),
                _ => quote!(if #flexible { #flex } else { #plain }),
            };
            quote!(ApiKey::#v => #body,)
        })
        .collect()
}

fn flexible_test(v: Option<Versions>) -> TokenStream {
    match v {
        None => quote!(false),
        Some(v) if v.is_open_ended() => {
            let min = Literal::i16_unsuffixed(v.min);
            quote!(version >= #min)
        }
        Some(v) => {
            let (a, b) = (Literal::i16_unsuffixed(v.min), Literal::i16_unsuffixed(v.max));
            quote!((#a..=#b).contains(&version))
        }
    }
}

fn emit_apis(apis: &[Api<'_>], retired: &[RetiredApi]) -> TokenStream {
    let variants: Vec<&Ident> = apis.iter().map(|a| &a.variant).collect();
    let keys: Vec<Literal> = apis.iter().map(|a| Literal::i16_unsuffixed(a.key)).collect();
    let names: Vec<String> = apis.iter().map(|a| a.variant.to_string()).collect();
    let requests: Vec<Ident> = apis.iter().map(|a| type_ident(&a.request.name)).collect();
    let responses: Vec<Ident> = apis.iter().map(|a| type_ident(&a.response.name)).collect();
    let valid: Vec<TokenStream> = apis.iter().map(|a| range_lit(a.request.valid_versions)).collect();
    let flexible: Vec<TokenStream> = apis.iter().map(|a| opt_range_lit(a.request.flexible_versions)).collect();
    let req_header = header_version_arms(apis, false);
    let resp_header = header_version_arms(apis, true);
    let request_kind = emit_kind_enum(
        &format_ident!("RequestKind"),
        " A request body of any API.",
        &variants,
        &requests,
        &names,
        retired,
    );
    let response_kind = emit_kind_enum(
        &format_ident!("ResponseKind"),
        " A response body of any API.",
        &variants,
        &responses,
        &names,
        retired,
    );

    // Retired APIs: a variant each (the key stays known and reserved), no versions, no codec.
    let r_variants: Vec<&Ident> = retired.iter().map(|r| &r.variant).collect();
    let r_keys: Vec<Literal> = retired.iter().map(|r| Literal::i16_unsuffixed(r.key)).collect();
    let r_names: Vec<String> = retired.iter().map(|r| r.variant.to_string()).collect();
    let r_docs: Vec<String> =
        retired.iter().map(|r| format!("{} (retired: no versions; the key stays reserved)", r.variant)).collect();
    let mut all: Vec<(i16, &Ident)> = apis.iter().map(|a| (a.key, &a.variant)).collect();
    all.extend(retired.iter().map(|r| (r.key, &r.variant)));
    all.sort_by_key(|(key, _)| *key);
    let all_variants = all.iter().map(|(_, v)| v);
    let retired_arms = if retired.is_empty() { quote!() } else { quote!(#(ApiKey::#r_variants)|* => None,) };
    let retired_header_arms = |classic: i16| {
        if retired.is_empty() {
            quote!()
        } else {
            quote!(#(ApiKey::#r_variants)|* => #classic,)
        }
    };
    let retired_req_header = retired_header_arms(1);
    let retired_resp_header = retired_header_arms(0);
    let is_retired = if retired.is_empty() { quote!(false) } else { quote!(matches!(self, #(ApiKey::#r_variants)|*)) };
    quote! {
        /// Every API in this set, by its numeric key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i16)]
        pub enum ApiKey {
            #(#[doc = #names] #variants = #keys,)*
            #(#[doc = #r_docs] #r_variants = #r_keys,)*
        }

        impl ApiKey {
            /// All APIs, in key order (retired ones included).
            pub const ALL: &'static [ApiKey] = &[#(ApiKey::#all_variants),*];

            /// The API with numeric key `key`, if this set has it.
            pub fn from_key(key: i16) -> Option<ApiKey> {
                match key {
                    #(#keys => Some(ApiKey::#variants),)*
                    #(#r_keys => Some(ApiKey::#r_variants),)*
                    _ => None,
                }
            }

            /// The numeric key.
            pub fn key(self) -> i16 {
                self as i16
            }

            /// The API's name, e.g. `Fetch`.
            pub fn name(self) -> &'static str {
                match self {
                    #(ApiKey::#variants => #names,)*
                    #(ApiKey::#r_variants => #r_names,)*
                }
            }

            /// Whether the API was retired (`validVersions: "none"`): its key is reserved, but
            /// it has no versions, and decoding it is an error.
            pub fn is_retired(self) -> bool {
                #is_retired
            }

            /// Versions of the API (its request schema's `validVersions`); `None` when retired.
            pub fn valid_versions(self) -> Option<rt::VersionRange> {
                match self {
                    #(ApiKey::#variants => Some(#valid),)*
                    #retired_arms
                }
            }

            /// Versions that use the flexible encoding.
            pub fn flexible_versions(self) -> Option<rt::VersionRange> {
                match self {
                    #(ApiKey::#variants => #flexible,)*
                    #retired_arms
                }
            }

            /// The request header version used with `version` of this API.
            #[allow(unused_variables)]
            pub fn request_header_version(self, version: i16) -> i16 {
                match self {
                    #(#req_header)*
                    #retired_req_header
                }
            }

            /// The response header version used with `version` of this API.
            #[allow(unused_variables)]
            pub fn response_header_version(self, version: i16) -> i16 {
                match self {
                    #(#resp_header)*
                    #retired_resp_header
                }
            }

        }

        impl TryFrom<i16> for ApiKey {
            type Error = rt::DecodeError;
            fn try_from(key: i16) -> Result<Self, Self::Error> {
                ApiKey::from_key(key).ok_or_else(|| rt::DecodeError::new(rt::DecodeErrorKind::UnknownApiKey(key)))
            }
        }

        #(
            impl rt::Request for #requests {
                const API_KEY: i16 = #keys;
                type Response = #responses;
            }
            impl rt::Response for #responses {
                const API_KEY: i16 = #keys;
            }
        )*

        #request_kind
        #response_kind
    }
}

/// `RequestKind` or `ResponseKind`: one variant per API holding its body type, with
/// `From`, `api_key`, `encode`, `encoded_size` and `decode` dispatching on the API.
fn emit_kind_enum(
    kind: &Ident,
    doc: &str,
    variants: &[&Ident],
    bodies: &[Ident],
    names: &[String],
    retired: &[RetiredApi],
) -> TokenStream {
    let r_variants = retired.iter().map(|r| &r.variant);
    let retired_arm = if retired.is_empty() {
        quote!()
    } else {
        quote!(#(ApiKey::#r_variants)|* => return Err(rt::DecodeError::new(rt::DecodeErrorKind::RetiredApi(api_key.key()))),)
    };
    quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, PartialEq)]
        pub enum #kind {
            #(#[doc = #names] #variants(#bodies),)*
        }

        #(
            impl From<#bodies> for #kind {
                fn from(body: #bodies) -> Self { #kind::#variants(body) }
            }
        )*

        impl #kind {
            /// The API this body belongs to.
            pub fn api_key(&self) -> ApiKey {
                match self { #(#kind::#variants(_) => ApiKey::#variants,)* }
            }
            /// Appends the body at `version`.
            pub fn encode(&self, buf: &mut rt::BytesMut, version: i16) -> Result<(), rt::EncodeError> {
                rt::write_contiguous(buf, |w| self.encode_into(w, version))
            }
            /// Appends the body at `version` to a writer (contiguous or vectored).
            pub fn encode_into(&self, w: &mut rt::Writer, version: i16) -> Result<(), rt::EncodeError> {
                match self { #(#kind::#variants(b) => rt::Encode::encode_into(b, w, version),)* }
            }
            /// Encoded size of the body at `version`.
            pub fn encoded_size(&self, version: i16) -> Result<usize, rt::EncodeError> {
                match self { #(#kind::#variants(b) => rt::Encode::encoded_size(b, version),)* }
            }
            /// Reads a body of API `api_key` at `version` (a retired API is an error).
            pub fn decode(api_key: ApiKey, buf: &mut rt::Bytes, version: i16) -> Result<Self, rt::DecodeError> {
                Ok(match api_key {
                    #(ApiKey::#variants => #kind::#variants(<#bodies as rt::Decode>::decode(buf, version)?),)*
                    #retired_arm
                })
            }
        }
    }
}

fn emit_frames() -> TokenStream {
    quote! {
        /// A whole request as it travels: header and body.
        #[derive(Debug, Clone, PartialEq)]
        pub struct RequestFrame {
            pub header: RequestHeader,
            pub body: RequestKind,
        }

        impl RequestFrame {
            /// Reads a request from `frame`, the bytes after the `i32` size prefix: the header
            /// version follows from the api key and version at its start. Bytes after the body
            /// are an error; see `decode_with_trailing` to accept them.
            pub fn decode(frame: rt::Bytes) -> Result<Self, rt::DecodeError> {
                let (decoded, trailing) = Self::decode_with_trailing(frame)?;
                rt::refuse_trailing(&trailing)?;
                Ok(decoded)
            }

            /// Like `decode`, but bytes after the body are accepted, as Kafka's broker ignores
            /// them (librdkafka 2.16 sends 3 after a Metadata v12 body), and returned so the
            /// caller sees how many there were.
            pub fn decode_with_trailing(mut frame: rt::Bytes) -> Result<(Self, rt::Bytes), rt::DecodeError> {
                let mut peek = frame.clone();
                let key = rt::get_i16(&mut peek)?;
                let version = rt::get_i16(&mut peek)?;
                let api_key = ApiKey::try_from(key)?;
                let valid = api_key
                    .valid_versions()
                    .ok_or_else(|| rt::DecodeError::new(rt::DecodeErrorKind::RetiredApi(key)))?;
                rt::check_decode_version(version, valid)?;
                let header = <RequestHeader as rt::Decode>::decode(&mut frame, api_key.request_header_version(version))?;
                let body = RequestKind::decode(api_key, &mut frame, version)?;
                Ok((RequestFrame { header, body }, frame))
            }

            /// Appends the `i32` size prefix, header and body, at the header's api version.
            pub fn encode(&self, buf: &mut rt::BytesMut) -> Result<(), rt::EncodeError> {
                rt::write_contiguous(buf, |w| self.encode_into(w))
            }

            /// The same bytes as `encode`, as chunks for `writev` that share large byte and
            /// records values instead of copying them (see `Encode::encode_vectored`).
            pub fn encode_vectored(&self, scratch: &mut rt::BytesMut, chunks: &mut Vec<rt::Bytes>) -> Result<(), rt::EncodeError> {
                rt::write_vectored(scratch, chunks, |w| self.encode_into(w))
            }

            /// Appends the frame to a writer (contiguous or vectored).
            pub fn encode_into(&self, w: &mut rt::Writer) -> Result<(), rt::EncodeError> {
                let api_key = self.body.api_key();
                let version = self.header.request_api_version;
                let header_version = api_key.request_header_version(version);
                let size = rt::Encode::encoded_size(&self.header, header_version)? + self.body.encoded_size(version)?;
                rt::put_frame_size(w, size)?;
                rt::Encode::encode_into(&self.header, w, header_version)?;
                self.body.encode_into(w, version)
            }
        }

        /// A whole response as it travels: header and body.
        #[derive(Debug, Clone, PartialEq)]
        pub struct ResponseFrame {
            pub header: ResponseHeader,
            pub body: ResponseKind,
        }

        impl ResponseFrame {
            /// Reads a response to a request of `api_key` at `version` from `frame`, the bytes
            /// after the `i32` size prefix (responses do not name their API). Bytes after the
            /// body are an error; see `decode_with_trailing` to accept them.
            pub fn decode(frame: rt::Bytes, api_key: ApiKey, version: i16) -> Result<Self, rt::DecodeError> {
                let (decoded, trailing) = Self::decode_with_trailing(frame, api_key, version)?;
                rt::refuse_trailing(&trailing)?;
                Ok(decoded)
            }

            /// Like `decode`, but bytes after the body are accepted and returned.
            pub fn decode_with_trailing(mut frame: rt::Bytes, api_key: ApiKey, version: i16) -> Result<(Self, rt::Bytes), rt::DecodeError> {
                let header = <ResponseHeader as rt::Decode>::decode(&mut frame, api_key.response_header_version(version))?;
                let body = ResponseKind::decode(api_key, &mut frame, version)?;
                Ok((ResponseFrame { header, body }, frame))
            }

            /// Appends the `i32` size prefix, header and body at `version`.
            pub fn encode(&self, buf: &mut rt::BytesMut, version: i16) -> Result<(), rt::EncodeError> {
                rt::write_contiguous(buf, |w| self.encode_into(w, version))
            }

            /// The same bytes as `encode`, as chunks for `writev` that share large byte and
            /// records values (a fetch's record data) instead of copying them.
            pub fn encode_vectored(&self, scratch: &mut rt::BytesMut, chunks: &mut Vec<rt::Bytes>, version: i16) -> Result<(), rt::EncodeError> {
                rt::write_vectored(scratch, chunks, |w| self.encode_into(w, version))
            }

            /// Appends the frame to a writer (contiguous or vectored).
            pub fn encode_into(&self, w: &mut rt::Writer, version: i16) -> Result<(), rt::EncodeError> {
                let header_version = self.body.api_key().response_header_version(version);
                let size = rt::Encode::encoded_size(&self.header, header_version)? + self.body.encoded_size(version)?;
                rt::put_frame_size(w, size)?;
                rt::Encode::encode_into(&self.header, w, header_version)?;
                self.body.encode_into(w, version)
            }
        }
    }
}
