//! The index file: module declarations, re-exports, the `ApiKey` table, request/response
//! dispatch enums and frame helpers (when the set has headers).

use std::collections::BTreeMap;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::names::{module_name, type_ident};
use super::split::{IndexScope, MessagePart};
use super::{opt_range_lit, range_lit, EmitOptions};
use crate::ir::{Message, MessageKind, Retired, Versions, API_VERSIONS_KEY, CONTROLLED_SHUTDOWN_KEY};

/// How the index mounts the per-schema files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexLayout {
    /// `pub mod x;` beside the index (checked-in output mounted as a module folder).
    Modules,
    /// `pub mod x { include!(concat!(env!("OUT_DIR"), "/<subdir>/x.rs")); }` for build scripts.
    IncludeFromOutDir { subdir: String },
}

/// The one place the index names the lints allowed in generated code: a macro that declares a
/// schema's module, so every module carries the same list.
fn schema_module_macro(layout: &IndexLayout) -> TokenStream {
    let allows = quote!(#[allow(clippy::all, clippy::pedantic, non_camel_case_types, unused_imports, unused_mut, unused_variables)]);
    match layout {
        IndexLayout::Modules => quote! {
            macro_rules! schema_module {
                ($doc:literal, $module:ident) => { #[doc = $doc] #allows pub mod $module; };
            }
        },
        IndexLayout::IncludeFromOutDir { .. } => quote! {
            macro_rules! schema_module {
                ($doc:literal, $module:ident, $path:literal) => {
                    #[doc = $doc] #allows pub mod $module { include!(concat!(env!("OUT_DIR"), $path)); }
                };
            }
        },
    }
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

/// Tokens for the index over `messages` (sorted by file name) and the `retired` schemas, or
/// over the share of them that `scope` names (a part's messages are all `messages` holds).
pub fn emit_index(
    messages: &[Message],
    retired: &[Retired],
    layout: &IndexLayout,
    scope: &IndexScope,
    runtime_path: &TokenStream,
    options: &EmitOptions,
) -> TokenStream {
    let module_macro = if scope.declares_modules() { schema_module_macro(layout) } else { quote!() };
    // `Config` has checked that every schema has a part, and that each part's path parses.
    let parts: Vec<(&MessagePart, TokenStream)> = match scope {
        IndexScope::OverParts(parts) => parts.iter().filter_map(|p| Some((p, p.crate_path.parse().ok()?))).collect(),
        _ => Vec::new(),
    };
    let mods = messages.iter().filter_map(|m| {
        let module = format_ident!("{}", module_name(&m.name));
        let doc = format!(" Generated from `{}`.", m.file);
        Some(match (scope, layout) {
            (IndexScope::OverParts(_), _) => {
                let (_, part) = parts.iter().find(|(p, _)| p.holds(&m.name))?;
                quote!(#[doc(inline)] pub use #part::#module;)
            }
            (_, IndexLayout::Modules) => quote!(schema_module!(#doc, #module);),
            (_, IndexLayout::IncludeFromOutDir { subdir }) => {
                let path = format!("/{subdir}/{}.rs", module_name(&m.name));
                quote!(schema_module!(#doc, #module, #path);)
            }
        })
    });
    let uses = messages.iter().map(|m| {
        let module = format_ident!("{}", module_name(&m.name));
        let ty = type_ident(&m.name);
        quote!(pub use #module::#ty;)
    });

    let apis = pair_apis(messages);
    let retired = retired_apis(retired, &apis);
    let headers =
        messages.iter().any(|m| m.name == "RequestHeader") && messages.iter().any(|m| m.name == "ResponseHeader");
    let (api_items, negotiation, frames) = if scope.spans_apis() {
        let traits = scope.declares_modules();
        let api_items = if apis.is_empty() { quote!() } else { emit_apis(&apis, &retired, traits, options) };
        let negotiation = if apis.is_empty() { quote!() } else { emit_negotiation(messages) };
        let frames = if headers && !apis.is_empty() { emit_frames(traits) } else { quote!() };
        (api_items, negotiation, frames)
    } else {
        let header_traits = if headers { header_trait_impls() } else { quote!() };
        let trait_impls = apis.iter().map(api_trait_impls);
        (quote!(#(#trait_impls)*), quote!(), header_traits)
    };
    let rt_use = if api_items.is_empty() && frames.is_empty() { quote!() } else { quote!(use #runtime_path as rt;) };
    quote! {
        #rt_use
        #module_macro
        #(#mods)*
        #(#uses)*
        #api_items
        #negotiation
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
                (CONTROLLED_SHUTDOWN_KEY, false) => {
                    quote!(if version == 0 { 0 } else if #flexible { #flex } else { #plain })
                }
                (API_VERSIONS_KEY, true) => quote!(0),
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

/// The versions of an API offered in negotiation: its valid versions without an unstable
/// latest one, unless asked for; `None` when that leaves nothing.
fn supported_versions(msg: &Message, options: &EmitOptions) -> Option<Versions> {
    let v = msg.valid_versions;
    if msg.latest_version_unstable && !options.unstable_versions {
        (v.max > v.min).then(|| Versions::new(v.min, v.max - 1))
    } else {
        Some(v)
    }
}

/// `ApiKey`, the body enums and the rest that spans every API; with `traits`, also the
/// runtime's traits on each API's types (see [`api_trait_impls`]).
fn emit_apis(apis: &[Api<'_>], retired: &[RetiredApi], traits: bool, options: &EmitOptions) -> TokenStream {
    let variants: Vec<&Ident> = apis.iter().map(|a| &a.variant).collect();
    let keys: Vec<Literal> = apis.iter().map(|a| Literal::i16_unsuffixed(a.key)).collect();
    let names: Vec<String> = apis.iter().map(|a| a.variant.to_string()).collect();
    let name_docs: Vec<String> = apis.iter().map(|a| format!(" {} (key {}).", a.variant, a.key)).collect();
    let requests: Vec<Ident> = apis.iter().map(|a| type_ident(&a.request.name)).collect();
    let responses: Vec<Ident> = apis.iter().map(|a| type_ident(&a.response.name)).collect();
    let valid: Vec<TokenStream> = apis.iter().map(|a| range_lit(a.request.valid_versions)).collect();
    let flexible: Vec<TokenStream> = apis.iter().map(|a| opt_range_lit(a.request.flexible_versions)).collect();
    let supported: Vec<TokenStream> =
        apis.iter().map(|a| opt_range_lit(supported_versions(a.request, options))).collect();
    let throttle = emit_throttle(apis);
    let responses_by_variant: Vec<(&Ident, &Message)> = apis.iter().map(|a| (&a.variant, a.response)).collect();
    let error_codes = super::error_codes::emit_dispatch(&responses_by_variant, options);
    let req_header = header_version_arms(apis, false);
    let resp_header = header_version_arms(apis, true);
    let request_kind = emit_kind_enum(
        &format_ident!("RequestKind"),
        " A request body of any API.",
        &variants,
        &requests,
        &names,
        retired,
        options.json,
    );
    let response_kind = emit_kind_enum(
        &format_ident!("ResponseKind"),
        " A response body of any API.",
        &variants,
        &responses,
        &names,
        retired,
        options.json,
    );

    // Retired APIs: a variant each (the key stays known and reserved), no versions, no codec.
    let r_variants: Vec<&Ident> = retired.iter().map(|r| &r.variant).collect();
    let r_keys: Vec<Literal> = retired.iter().map(|r| Literal::i16_unsuffixed(r.key)).collect();
    let r_names: Vec<String> = retired.iter().map(|r| r.variant.to_string()).collect();
    let r_docs: Vec<String> = retired
        .iter()
        .map(|r| format!(" {} (key {}; retired: no versions, the key stays reserved).", r.variant, r.key))
        .collect();
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
    let trait_impls = apis.iter().map(|a| if traits { api_trait_impls(a) } else { quote!() });
    quote! {
        /// Every API in this set, by its numeric key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i16)]
        pub enum ApiKey {
            #(#[doc = #name_docs] #variants = #keys,)*
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

            /// Versions offered to a broker in negotiation: the valid versions without an
            /// unstable latest one (`latestVersionUnstable`), unless the code was generated
            /// with `Config::unstable_versions(true)`; `None` when retired or only unstable.
            pub fn supported_versions(self) -> Option<rt::VersionRange> {
                match self {
                    #(ApiKey::#variants => #supported,)*
                    #retired_arms
                }
            }

            /// The version to use with a broker that supports `broker` of this API: the
            /// highest version in both ranges, or `None` when they do not meet.
            pub fn negotiate(self, broker: rt::VersionRange) -> Option<i16> {
                self.supported_versions()?.highest_common(&broker)
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
            #trait_impls
            impl ApiRequest for #requests {
                const API: ApiKey = ApiKey::#variants;
            }
        )*

        /// A request of this set, tied to its [`ApiKey`] and to the set's body enums: what a
        /// connection needs to send it and to hand back its typed response.
        pub trait ApiRequest: rt::Request<Response: TryFrom<ResponseKind, Error = ResponseKind>> + Into<RequestKind> {
            /// The API this request belongs to.
            const API: ApiKey;
        }

        #request_kind
        #response_kind
        #throttle
        #error_codes
    }
}

/// The runtime's `Request` and `Response` traits on one API's types: where the types are
/// defined, as Rust requires of a trait from another crate.
fn api_trait_impls(api: &Api<'_>) -> TokenStream {
    let key = Literal::i16_unsuffixed(api.key);
    let request = type_ident(&api.request.name);
    let response = type_ident(&api.response.name);
    quote! {
        impl rt::Request for #request {
            const API_KEY: i16 = #key;
            type Response = #response;
        }
        impl rt::Response for #response {
            const API_KEY: i16 = #key;
        }
    }
}

/// `ResponseKind::throttle_time_ms`: the top-level `ThrottleTimeMs` of each response that has
/// one, where its version has it, so a connection can report and honour quotas (KIP-219)
/// whatever the API.
fn emit_throttle(apis: &[Api<'_>]) -> TokenStream {
    let mut arms = Vec::new();
    let mut every_version = true;
    for api in apis {
        let field =
            api.response.fields.iter().find(|f| {
                f.name == "ThrottleTimeMs" && f.ty == crate::ir::FieldType::Int32 && f.tagged_versions.is_none()
            });
        let Some(field) = field else {
            every_version = false;
            continue;
        };
        let variant = &api.variant;
        let name = super::names::field_ident(&field.name);
        match super::cond::Cond::new(Some(field.versions), api.response.valid_versions) {
            super::cond::Cond::Never => every_version = false,
            super::cond::Cond::Always => arms.push(quote!(ResponseKind::#variant(b) => Some(b.#name),)),
            super::cond::Cond::Test(test) => {
                every_version = false;
                arms.push(quote!(ResponseKind::#variant(b) if #test => Some(b.#name),));
            }
        }
    }
    let rest = if every_version { quote!() } else { quote!(_ => None,) };
    quote! {
        impl ResponseKind {
            /// How long the broker throttles this client, in ms (`throttle_time_ms`, 0 when
            /// not throttled); `None` when the response at `version` has no such field.
            #[allow(unused_variables)]
            pub fn throttle_time_ms(&self, version: i16) -> Option<i32> {
                match self {
                    #(#arms)*
                    #rest
                }
            }
        }
    }
}

/// `NegotiatedVersions`, when the set has an `ApiVersionsResponse` of Kafka's shape.
fn emit_negotiation(messages: &[Message]) -> TokenStream {
    let Some(response) = messages.iter().find(|m| m.name == "ApiVersionsResponse") else { return quote!() };
    let has = |fields: &[crate::ir::Field], names: &[&str]| names.iter().all(|n| fields.iter().any(|f| f.name == *n));
    let element = response.fields.iter().find(|f| f.name == "ApiKeys").and_then(|f| f.ty.struct_name());
    let shaped = element
        .and_then(|name| response.structs.iter().find(|s| s.name == name))
        .is_some_and(|s| has(&s.fields, &["ApiKey", "MinVersion", "MaxVersion"]));
    if !shaped {
        return quote!();
    }
    quote! {
        /// The version of each API to use with one broker, worked out from its
        /// `ApiVersionsResponse`: for every API both sides know, the highest version in both
        /// ranges (see `ApiKey::negotiate`). APIs the broker does not list, or whose ranges do
        /// not meet, have none.
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct NegotiatedVersions {
            /// Sorted by api key, one entry per API.
            versions: Vec<(ApiKey, i16)>,
        }

        impl NegotiatedVersions {
            /// Negotiates against every API the broker lists. Keys this code does not know
            /// are skipped; an API listed twice counts once, at its first entry.
            pub fn from_response(response: &ApiVersionsResponse) -> Self {
                let mut versions: Vec<(ApiKey, i16)> = response
                    .api_keys
                    .iter()
                    .filter_map(|api| {
                        let key = ApiKey::from_key(api.api_key)?;
                        Some((key, key.negotiate(rt::VersionRange::new(api.min_version, api.max_version))?))
                    })
                    .collect();
                versions.sort_by_key(|(key, _)| *key);
                versions.dedup_by_key(|(key, _)| *key);
                NegotiatedVersions { versions }
            }

            /// The version to use for `api`, if the broker and this code share one.
            pub fn version(&self, api: ApiKey) -> Option<i16> {
                let at = self.versions.binary_search_by_key(&api, |(key, _)| *key).ok()?;
                Some(self.versions[at].1)
            }

            /// Every API with a common version, in key order.
            pub fn iter(&self) -> impl Iterator<Item = (ApiKey, i16)> + '_ {
                self.versions.iter().copied()
            }
        }
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
    json: bool,
) -> TokenStream {
    let r_variants: Vec<&Ident> = retired.iter().map(|r| &r.variant).collect();
    let docs = names.iter().map(|n| format!(" {n}."));
    let json_dispatch = if json {
        let retired_json = if retired.is_empty() {
            quote!()
        } else {
            quote!(#(ApiKey::#r_variants)|* => return Err(rt::json::JsonError::new(format!("API {} is retired", api_key.name()))),)
        };
        quote! {
            impl #kind {
                /// The body's Kafka-style JSON at `version` (see `rt::json`). Inline, so that
                /// like the converters it is compiled only where it is used.
                #[inline]
                pub fn to_json(&self, version: i16) -> Result<rt::json::Value, rt::json::JsonError> {
                    match self { #(#kind::#variants(b) => rt::json::Json::to_json(b, version),)* }
                }
                /// Reads a body of API `api_key` at `version` from its JSON.
                #[inline]
                pub fn from_json(api_key: ApiKey, value: &rt::json::Value, version: i16) -> Result<Self, rt::json::JsonError> {
                    Ok(match api_key {
                        #(ApiKey::#variants => #kind::#variants(<#bodies as rt::json::Json>::from_json(value, version)?),)*
                        #retired_json
                    })
                }
            }
        }
    } else {
        quote!()
    };
    let retired_arm = if retired.is_empty() {
        quote!()
    } else {
        quote!(#(ApiKey::#r_variants)|* => return Err(rt::DecodeError::new(rt::DecodeErrorKind::RetiredApi(api_key.key()))),)
    };
    // The typed body back out of the enum; the enum itself when it holds another API (a set
    // of one API has no other arm to write).
    let other_arm = if variants.len() > 1 { quote!(other => Err(other),) } else { quote!() };
    let try_from = quote! {
        #(
            impl TryFrom<#kind> for #bodies {
                type Error = #kind;
                fn try_from(body: #kind) -> Result<Self, #kind> {
                    match body {
                        #kind::#variants(b) => Ok(b),
                        #other_arm
                    }
                }
            }
        )*
    };
    quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, PartialEq)]
        pub enum #kind {
            #(#[doc = #docs] #variants(#bodies),)*
        }

        #(
            impl From<#bodies> for #kind {
                fn from(body: #bodies) -> Self { #kind::#variants(body) }
            }
        )*

        #try_from

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

        #json_dispatch
    }
}

/// Frames are the runtime's generic `RequestFrame`/`ResponseFrame`; the set says what its
/// api key, bodies and headers are (with `traits`, the headers' traits here too: see
/// [`header_trait_impls`]).
fn emit_frames(traits: bool) -> TokenStream {
    let bodies = [format_ident!("RequestKind"), format_ident!("ResponseKind")].map(|kind| {
        quote! {
            impl rt::FrameBody for #kind {
                type Api = ApiKey;
                fn api_key(&self) -> ApiKey { #kind::api_key(self) }
                fn encode_into(&self, w: &mut rt::Writer, version: i16) -> Result<(), rt::EncodeError> { #kind::encode_into(self, w, version) }
                fn encoded_size(&self, version: i16) -> Result<usize, rt::EncodeError> { #kind::encoded_size(self, version) }
                fn decode(api_key: ApiKey, buf: &mut rt::Bytes, version: i16) -> Result<Self, rt::DecodeError> { #kind::decode(api_key, buf, version) }
            }
        }
    });
    let header_traits = if traits { header_trait_impls() } else { quote!() };
    quote! {
        /// A whole request as it travels: header and body (see `rt::RequestFrame`).
        pub type RequestFrame = rt::RequestFrame<RequestHeader, RequestKind>;
        /// A whole response as it travels: header and body (see `rt::ResponseFrame`).
        pub type ResponseFrame = rt::ResponseFrame<ResponseHeader, ResponseKind>;

        impl rt::FrameApi for ApiKey {
            fn key(self) -> i16 { ApiKey::key(self) }
            fn valid_versions(self) -> Option<rt::VersionRange> { ApiKey::valid_versions(self) }
            fn request_header_version(self, version: i16) -> i16 { ApiKey::request_header_version(self, version) }
            fn response_header_version(self, version: i16) -> i16 { ApiKey::response_header_version(self, version) }
        }

        #header_traits

        #(#bodies)*
    }
}

/// The runtime's header traits on the set's `RequestHeader` and `ResponseHeader`.
fn header_trait_impls() -> TokenStream {
    quote! {
        impl rt::RequestHeaderFields for RequestHeader {
            fn new(api_key: i16, version: i16, correlation_id: i32, client_id: Option<rt::StrBytes>) -> Self {
                RequestHeader {
                    request_api_key: api_key,
                    request_api_version: version,
                    correlation_id,
                    client_id,
                    ..RequestHeader::default()
                }
            }
            fn api_key(&self) -> i16 { self.request_api_key }
            fn api_version(&self) -> i16 { self.request_api_version }
        }

        impl rt::ResponseHeaderFields for ResponseHeader {
            fn new(correlation_id: i32) -> Self {
                ResponseHeader { correlation_id, ..ResponseHeader::default() }
            }
        }
    }
}
