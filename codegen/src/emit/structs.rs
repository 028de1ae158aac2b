//! One Rust struct per schema struct, with `Default`, `Encode` and `Decode` for every version.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::cond::Cond;
use super::keyed::{emit_keyed, KeyField};
use super::names::{field_ident, type_ident};
use super::types::{default_expr, field_type, is_option, newtype};
use super::EmitOptions;
use crate::ir::{min_value_size, DefaultValue, Field, FieldType, Layout, Message, Versions};

/// What emission of one struct needs to know.
pub struct StructCtx<'a> {
    /// Path to the runtime's `__codegen` module.
    pub rt: &'a TokenStream,
    pub options: &'a EmitOptions,
    pub msg: &'a Message,
    /// Schema name of the struct.
    pub name: &'a str,
    pub fields: &'a [Field],
    /// Versions in which this struct can be encoded or decoded.
    pub within: Versions,
    /// Whether this is the message itself (checks versions, records offsets).
    pub is_root: bool,
}

/// A value being written: a place (`self.x`) or a reference (`el`, `v`).
#[derive(Clone)]
struct Val {
    tokens: TokenStream,
    is_ref: bool,
}

impl Val {
    fn place(tokens: TokenStream) -> Self {
        Val { tokens, is_ref: false }
    }
    fn reference(tokens: TokenStream) -> Self {
        Val { tokens, is_ref: true }
    }
    /// An expression of type `&T`.
    fn by_ref(&self) -> TokenStream {
        let t = &self.tokens;
        if self.is_ref {
            quote!(#t)
        } else {
            quote!(&#t)
        }
    }
    /// An expression of type `T` (for `Copy` types).
    fn by_value(&self) -> TokenStream {
        let t = &self.tokens;
        if self.is_ref {
            quote!(*#t)
        } else {
            quote!(#t)
        }
    }
    /// An expression to call methods on.
    fn receiver(&self) -> TokenStream {
        self.tokens.clone()
    }
    /// The value a newtype wraps: `x.0` is a place whether `x` is one or a reference.
    fn wrapped(&self) -> Val {
        let t = &self.tokens;
        Val::place(quote!(#t.0))
    }
}

/// Everything about one field at the versions of its struct.
pub(super) struct Plan<'a> {
    pub(super) field: &'a Field,
    pub(super) ident: Ident,
    /// Name used in error paths.
    pub(super) label: String,
    pub(super) option: bool,
    /// Present and sent in the regular (untagged) part.
    pub(super) regular: Cond,
    /// Present and sent as a tagged field.
    pub(super) tagged: Cond,
    /// The same test inside the tagged section, where the version is known to be flexible.
    tagged_in_section: Cond,
    /// Null allowed, tested only among the versions where the field is sent untagged.
    nullable_regular: Cond,
    /// Null allowed, tested only among the versions where the field is sent tagged.
    nullable_tagged: Cond,
    /// Expression for "use the compact encoding".
    pub(super) compact: TokenStream,
    /// The runtime newtype of the field's values, if it has one.
    pub(super) wrap: Option<TokenStream>,
}

impl Plan<'_> {
    /// Where null is allowed, in the regular (`tagged == false`) or tagged part.
    fn nullable(&self, tagged: bool) -> &Cond {
        if tagged {
            &self.nullable_tagged
        } else {
            &self.nullable_regular
        }
    }

    /// Sent untagged at every version of its struct, never null, of a fixed size: its bytes
    /// need no test, and its size is a constant.
    fn fixed_always(&self) -> bool {
        matches!(self.regular, Cond::Always)
            && matches!(self.tagged, Cond::Never)
            && !self.option
            && self.field.ty.fixed_size().is_some()
    }
}

impl StructCtx<'_> {
    fn flexible(&self) -> Cond {
        Cond::new(self.msg.flexible_versions, self.within)
    }

    pub(super) fn has_tag_buffer(&self) -> bool {
        self.msg.flexible_versions.is_some()
    }

    pub(super) fn plans(&self) -> Vec<Plan<'_>> {
        let flexible = self.flexible();
        let flexible_within = self.msg.flexible_versions.and_then(|f| f.intersect(&self.within)).unwrap_or(self.within);
        self.fields
            .iter()
            .map(|field| {
                // A nullability test sits inside the field's regular or tagged part, so it
                // only has to tell apart the versions that reach that part.
                let nullable_in = |range: Option<Versions>| {
                    let reach = range.and_then(|r| r.intersect(&self.within)).unwrap_or(self.within);
                    Cond::new(field.nullable_versions, reach)
                };
                let compact = match (&field.flexible_versions, &flexible) {
                    // The message's flexibility is already bound to a local.
                    (None, Cond::Test(_)) => quote!(flexible),
                    _ => Cond::new(field.compact_versions(self.msg.flexible_versions), self.within).expr(),
                };
                let ident = field_ident(&field.name);
                Plan {
                    field,
                    label: ident.to_string().trim_start_matches("r#").to_string(),
                    ident,
                    option: is_option(field),
                    regular: Cond::new(field.regular_range(), self.within),
                    tagged: Cond::new(field.tagged_range(), self.within),
                    // The tagged section itself is reached only at flexible versions.
                    tagged_in_section: Cond::new(field.tagged_range(), flexible_within),
                    nullable_regular: nullable_in(field.regular_range()),
                    nullable_tagged: nullable_in(field.tagged_range()),
                    compact,
                    wrap: newtype(field, self.options, self.rt),
                }
            })
            .collect()
    }

    /// The struct definition, `Default`, `Encode` and `Decode`.
    pub fn emit(&self) -> TokenStream {
        let rt = self.rt;
        let ty = type_ident(self.name);
        let plans = self.plans();
        let docs = self.struct_doc();
        let name_lit = self.name;
        let fields = plans.iter().map(|p| {
            let ident = &p.ident;
            let t = field_type(p.field, rt, p.wrap.as_ref());
            let doc = field_doc(p.field);
            quote!(#[doc = #doc] pub #ident: #t,)
        });
        let defaults = plans.iter().map(|p| {
            let ident = &p.ident;
            let d = default_expr(p.field, rt, p.wrap.as_ref());
            quote!(#ident: #d,)
        });
        let (tag_field, tag_default) = if self.has_tag_buffer() {
            (
                quote!(#[doc = " Tagged fields this version of the code does not know, kept for re-encoding."]
                       pub unknown_tagged_fields: #rt::UnknownTags,),
                quote!(unknown_tagged_fields: #rt::UnknownTags::new(),),
            )
        } else {
            (quote!(), quote!())
        };
        let encode = self.emit_encode(&plans);
        let size = self.emit_size(&plans);
        let decode = self.emit_decode(&plans);
        let min_wire_size = self.emit_min_wire_size();
        // Inlining a nested struct's decoder into its parent's array loop lets the value be
        // built in the vector's slot instead of on the stack and copied; inlining its encoder
        // saves a call and a result per element of an array of small structs.
        let nested_inline = if self.is_root { quote!() } else { quote!(#[inline]) };
        let keys: Vec<KeyField<'_>> = plans
            .iter()
            .filter(|p| p.field.map_key)
            .map(|p| KeyField { ident: &p.ident, field: p.field, wrap: p.wrap.as_ref() })
            .collect();
        let keyed = emit_keyed(self.name, &keys, rt);
        let json = if self.options.json { self.emit_json(&plans) } else { quote!() };
        let error_codes = super::error_codes::emit_visitor(self.msg, self.fields, self.within, self.options, rt);
        quote! {
            #(#[doc = #docs])*
            #[derive(Debug, Clone, PartialEq)]
            pub struct #ty {
                #(#fields)*
                #tag_field
            }

            impl #ty {
                /// The schema's name for this struct, as errors name it.
                pub const NAME: &'static str = #name_lit;
                #error_codes
            }

            impl Default for #ty {
                fn default() -> Self {
                    #ty { #(#defaults)* #tag_default }
                }
            }

            impl #rt::Encode for #ty {
                #nested_inline
                fn encode_into(&self, buf: &mut #rt::Writer, version: i16) -> Result<(), #rt::EncodeError> {
                    #encode
                }
                fn encoded_size(&self, version: i16) -> Result<usize, #rt::EncodeError> {
                    #size
                }
            }

            impl #rt::Decode for #ty {
                #nested_inline
                fn decode(buf: &mut #rt::Bytes, version: i16) -> Result<Self, #rt::DecodeError> {
                    #decode
                }
                #min_wire_size
            }

            #keyed
            #json
        }
    }

    /// `Decode::min_wire_size` for a nested struct (what an array of it is checked against), a
    /// constant or a `match` over the version runs of equal size, from the IR's layout. The
    /// message itself is never an array element and keeps the trait's default.
    fn emit_min_wire_size(&self) -> TokenStream {
        if self.is_root {
            return quote!();
        }
        let mut runs: Vec<(Versions, usize)> = Vec::new();
        for version in self.within.min..=self.within.max {
            let size = Layout::of(self.msg, self.fields, version).min_size(self.msg);
            match runs.last_mut() {
                Some((range, last)) if *last == size => range.max = version,
                _ => runs.push((Versions::new(version, version), size)),
            }
        }
        let body = match runs.as_slice() {
            [(_, size)] => {
                let size = Literal::usize_unsuffixed(*size);
                return quote! {
                    #[inline]
                    fn min_wire_size(_version: i16) -> usize { #size }
                };
            }
            runs => {
                let last = runs.len() - 1;
                let arms = runs.iter().enumerate().map(|(i, (range, size))| {
                    let size = Literal::usize_unsuffixed(*size);
                    let (min, max) = (Literal::i16_unsuffixed(range.min), Literal::i16_unsuffixed(range.max));
                    // The first and last runs are open, so the match needs no catch-all arm.
                    match i {
                        0 => quote!(..=#max => #size,),
                        i if i == last => quote!(#min.. => #size,),
                        _ if range.min == range.max => quote!(#min => #size,),
                        _ => quote!(#min..=#max => #size,),
                    }
                });
                quote!(match version { #(#arms)* })
            }
        };
        quote! {
            #[inline]
            fn min_wire_size(version: i16) -> usize { #body }
        }
    }

    /// The fewest bytes one element of an array of `inner` takes, as an expression: a struct's
    /// `min_wire_size` at the version, else the IR's size with compact lengths or classic ones.
    fn min_element_size(&self, inner: &FieldType, compact: &TokenStream) -> TokenStream {
        let rt = self.rt;
        if let FieldType::Struct(s) = inner {
            let t = type_ident(s);
            return quote!(<#t as #rt::Decode>::min_wire_size(version));
        }
        let at = self.within.min;
        let (flexible, classic) =
            (min_value_size(self.msg, inner, true, at), min_value_size(self.msg, inner, false, at));
        let (f, c) = (Literal::usize_unsuffixed(flexible), Literal::usize_unsuffixed(classic));
        match compact.to_string().as_str() {
            "true" => quote!(#f),
            "false" => quote!(#c),
            _ if flexible == classic => quote!(#f),
            _ => quote!(if #compact { #f } else { #c }),
        }
    }

    /// The struct's doc lines: for the message itself its API key, versions (valid, flexible,
    /// deprecated, unstable) and the schema's version history; for a nested struct where it
    /// is used.
    fn struct_doc(&self) -> Vec<String> {
        let msg = self.msg;
        if !self.is_root {
            return vec![format!(" {} of `{}` (versions {}).", self.name, msg.name, self.within)];
        }
        let mut facts = Vec::new();
        if let Some(key) = msg.api_key {
            facts.push(format!("API key {key}"));
        }
        facts.push(format!("versions {}", msg.valid_versions));
        facts.push(match msg.flexible_versions {
            Some(f) => format!("flexible {f}"),
            None => "never flexible".to_string(),
        });
        if let Some(d) = msg.deprecated_versions {
            facts.push(format!("deprecated {d}"));
        }
        if msg.latest_version_unstable {
            facts.push(format!("version {} unstable", msg.valid_versions.max));
        }
        let mut lines = vec![format!(" {}: {}.", msg.name, facts.join(", "))];
        if !msg.history.is_empty() {
            lines.push(String::new());
            lines.push(" Version history, from the schema:".to_string());
            lines.push(String::new());
            lines.extend(msg.history.iter().map(|p| format!(" - {}", markdown_text(p))));
        }
        lines
    }

    fn version_check(&self, encode: bool) -> TokenStream {
        if !self.is_root {
            return quote!();
        }
        let rt = self.rt;
        let range = super::range_lit(self.within);
        if encode {
            quote!(#rt::check_encode_version(version, #range)?;)
        } else {
            quote!(#rt::check_decode_version(version, #range)?;)
        }
    }

    fn flexible_binding(&self) -> TokenStream {
        match self.flexible() {
            Cond::Test(t) => quote!(let flexible = #t;),
            _ => quote!(),
        }
    }

    /// `work` where the field is sent untagged; where it is absent, a check that it holds
    /// nothing the version cannot carry.
    fn regular_or_absent(&self, p: &Plan<'_>, work: TokenStream) -> TokenStream {
        let (test, fail) = self.absent_error(p);
        if matches!(p.tagged, Cond::Never) && !p.field.ignorable {
            // `if sent { work } else if not_default { fail }`
            return match &p.regular {
                Cond::Always => work,
                Cond::Never => quote!(if #test { #fail }),
                Cond::Test(t) => quote!(if #t { #work } else if #test { #fail }),
            };
        }
        let work = p.regular.branch(work, quote!());
        if p.field.ignorable {
            return work;
        }
        // Where the field does not exist at all, it must hold its default.
        let check = match Cond::outside(p.field.versions, self.within) {
            Cond::Never => quote!(),
            absent => {
                let test = absent.and(test);
                quote!(if #test { #fail })
            }
        };
        quote!(#work #check)
    }

    /// The test "the field is not at its default" and the statement failing for it.
    fn absent_error(&self, p: &Plan<'_>) -> (TokenStream, TokenStream) {
        let rt = self.rt;
        let (ident, label) = (&p.ident, &p.label);
        let test = not_default(p, quote!(self.#ident), rt);
        (test, quote!(return Err(#rt::field_not_in_version(version).within(Self::NAME, #label));))
    }

    fn tagged_plans<'p>(&self, plans: &'p [Plan<'p>]) -> Vec<&'p Plan<'p>> {
        let mut tagged: Vec<&Plan<'_>> = plans.iter().filter(|p| !matches!(p.tagged, Cond::Never)).collect();
        tagged.sort_by_key(|p| p.field.tag);
        tagged
    }

    /// The tagged-field section at flexible versions: `unknown_only` when no field of the
    /// struct is tagged, `known(tagged fields in tag order)` otherwise; `otherwise` elsewhere.
    fn tag_section<'p>(
        &self,
        plans: &'p [Plan<'p>],
        unknown_only: TokenStream,
        known: impl FnOnce(Vec<&'p Plan<'p>>) -> TokenStream,
        otherwise: TokenStream,
    ) -> TokenStream {
        if !self.has_tag_buffer() {
            return quote!();
        }
        let tagged = self.tagged_plans(plans);
        let body = if tagged.is_empty() { unknown_only } else { known(tagged) };
        self.flexible().branch(body, otherwise)
    }

    /// Unknown tags cannot be written at a version that is not flexible.
    fn no_unknown_tags_check(&self) -> TokenStream {
        let (rt, name) = (self.rt, quote!(Self::NAME));
        quote!(#rt::check_no_unknown_tags(&self.unknown_tagged_fields, version).within(#name, "unknown_tagged_fields")?;)
    }

    fn emit_encode(&self, plans: &[Plan<'_>]) -> TokenStream {
        let rt = self.rt;
        let check = self.version_check(true);
        let flexible = self.flexible_binding();
        let regular = self.fixed_runs(plans).into_iter().map(|run| match run {
            [p] => {
                let ident = &p.ident;
                let write = self.write_field(p, Val::place(quote!(self.#ident)), false);
                self.regular_or_absent(p, write)
            }
            run => write_fixed_run(run, rt),
        });
        let tags = self.tag_section(
            plans,
            quote!(#rt::put_unknown_tags(buf, &self.unknown_tagged_fields);),
            |tagged| {
                let present_names: Vec<Ident> =
                    tagged.iter().map(|p| format_ident!("tag_{}", p.field.tag.unwrap_or(0))).collect();
                let presents = tagged.iter().zip(&present_names).map(|(p, flag)| {
                    let ident = &p.ident;
                    let present = p.tagged_in_section.and(not_default(p, quote!(self.#ident), rt));
                    quote!(let #flag = #present;)
                });
                let writes = tagged.iter().zip(&present_names).map(|(p, flag)| {
                    let tag = Literal::u32_unsuffixed(p.field.tag.unwrap_or(0));
                    let ident = &p.ident;
                    let size = self.size_field(p, Val::place(quote!(self.#ident)), &format_ident!("value_size"), true);
                    let write = self.write_field(p, Val::place(quote!(self.#ident)), true);
                    quote! {
                        if #flag {
                            #rt::put_unknown_tags_below(buf, &mut unknown, #tag);
                            let mut value_size = 0usize;
                            #size
                            #rt::put_tagged_header(buf, #tag, value_size);
                            #write
                        }
                    }
                });
                quote! {
                    #(#presents)*
                    let count = self.unknown_tagged_fields.len() #(+ usize::from(#present_names))*;
                    #rt::put_uvarint(buf, count as u32);
                    let mut unknown = self.unknown_tagged_fields.iter().peekable();
                    #(#writes)*
                    #rt::put_remaining_unknown_tags(buf, &mut unknown);
                }
            },
            self.no_unknown_tags_check(),
        );
        quote! {
            #check
            #flexible
            #(#regular)*
            #tags
            Ok(())
        }
    }

    /// The fields in order, consecutive fixed-width fields sent untagged at every version of
    /// the struct grouped together: such a run is written as one slice.
    fn fixed_runs<'p>(&self, plans: &'p [Plan<'p>]) -> Vec<&'p [Plan<'p>]> {
        let mut runs = Vec::new();
        let mut start = 0;
        while start < plans.len() {
            let len = plans[start..].iter().take_while(|p| p.fixed_always()).count().max(1);
            runs.push(&plans[start..start + len]);
            start += len;
        }
        runs
    }

    fn emit_size(&self, plans: &[Plan<'_>]) -> TokenStream {
        let rt = self.rt;
        let check = self.version_check(true);
        let flexible = self.flexible_binding();
        let acc = format_ident!("size");
        // The fields of a fixed size that are always sent add up to one constant.
        let constant: usize = plans.iter().filter(|p| p.fixed_always()).filter_map(|p| p.field.ty.fixed_size()).sum();
        let constant = Literal::usize_unsuffixed(constant);
        let regular = plans.iter().filter(|p| !p.fixed_always()).map(|p| {
            let ident = &p.ident;
            let s = self.size_field(p, Val::place(quote!(self.#ident)), &acc, false);
            self.regular_or_absent(p, s)
        });
        let tags = self.tag_section(
            plans,
            quote!(size += #rt::unknown_tags_section_size(&self.unknown_tagged_fields);),
            |tagged| {
                let items = tagged.iter().map(|p| {
                    let ident = &p.ident;
                    let tag = Literal::u32_unsuffixed(p.field.tag.unwrap_or(0));
                    let present = p.tagged_in_section.and(not_default(p, quote!(self.#ident), rt));
                    let s = self.size_field(p, Val::place(quote!(self.#ident)), &format_ident!("value_size"), true);
                    quote! {
                        if #present {
                            count += 1;
                            let mut value_size = 0usize;
                            #s
                            size += #rt::tagged_field_size(#tag, value_size);
                        }
                    }
                });
                quote! {
                    let mut count = self.unknown_tagged_fields.len();
                    size += #rt::unknown_tags_size(&self.unknown_tagged_fields);
                    #(#items)*
                    size += #rt::uvarint_size(count as u32);
                }
            },
            self.no_unknown_tags_check(),
        );
        quote! {
            #check
            #flexible
            let mut size: usize = #constant;
            #(#regular)*
            #tags
            Ok(size)
        }
    }

    /// Decoding reads every field into a local and builds the struct once at the end: no
    /// `Default` value is built and then overwritten, and the struct is not copied around.
    fn emit_decode(&self, plans: &[Plan<'_>]) -> TokenStream {
        let rt = self.rt;
        let ty = type_ident(self.name);
        let flexible = self.flexible_binding();
        let name = quote!(Self::NAME);
        let tagged_idents: Vec<&Ident> = self.tagged_plans(plans).iter().map(|p| &p.ident).collect();
        let locals = plans.iter().map(|p| {
            let local = local_ident(&p.ident);
            let mutable = if tagged_idents.contains(&&p.ident) { quote!(mut) } else { quote!() };
            let read = self.read_field(p, false);
            let default = default_expr(p.field, rt, p.wrap.as_ref());
            let value = p.regular.branch_expr(read, default);
            quote!(let #mutable #local = #value;)
        });
        let unknown_local = if self.has_tag_buffer() {
            quote!(let mut unknown_tagged_fields = #rt::UnknownTags::new();)
        } else {
            quote!()
        };
        let tags = self.tag_section(
            plans,
            quote!(#rt::get_unknown_tags(buf, &mut unknown_tagged_fields).within(#name, "unknown_tagged_fields")?;),
            |tagged| {
                let seen = quote!(let mut seen = 0u64;);
                let arms = tagged.into_iter().map(|p| {
                    let local = local_ident(&p.ident);
                    let tag = Literal::u32_unsuffixed(p.field.tag.unwrap_or(0));
                    let read = self.read_field(p, true);
                    let label = &p.label;
                    let accept = quote! {
                        #rt::note_known_tag(&mut seen, #tag).within(#name, "unknown_tagged_fields")?;
                        let declared = value.len();
                        let buf = &mut value;
                        #local = #read;
                        #rt::check_tagged_consumed(#tag, declared, buf).within(#name, #label)?;
                    };
                    let reject = quote!(return Err(#rt::tag_not_valid(#tag, version).within(#name, #label)););
                    let body = p.tagged_in_section.branch(accept, reject);
                    quote!(#tag => { #body })
                });
                quote! {
                    let count = #rt::get_tagged_field_count(buf).within(#name, "unknown_tagged_fields")?;
                    #seen
                    for _ in 0..count {
                        let (tag, mut value) = #rt::get_tagged_field(buf).within(#name, "unknown_tagged_fields")?;
                        match tag {
                            #(#arms)*
                            _ => #rt::keep_unknown_tag(&mut unknown_tagged_fields, tag, value).within(#name, "unknown_tagged_fields")?,
                        }
                    }
                }
            },
            quote!(),
        );
        let inits = plans.iter().map(|p| {
            let (ident, local) = (&p.ident, local_ident(&p.ident));
            quote!(#ident: #local,)
        });
        let unknown_init = if self.has_tag_buffer() { quote!(unknown_tagged_fields,) } else { quote!() };
        let body = quote! {
            #flexible
            #(#locals)*
            #unknown_local
            #tags
            Ok(#ty { #(#inits)* #unknown_init })
        };
        if self.is_root {
            let check = self.version_check(false);
            quote! {
                #check
                #rt::decode_message(buf, |buf| { #body })
            }
        } else {
            body
        }
    }

    // ---- per-field pieces ----

    /// Statements writing the field (whose reference expression is `val`); `tagged` when it is
    /// written as a tagged field's value, where a nullable struct's marker is an unsigned varint.
    fn write_field(&self, p: &Plan<'_>, val: Val, tagged: bool) -> TokenStream {
        let rt = self.rt;
        let (name, label) = (quote!(Self::NAME), &p.label);
        let compact = &p.compact;
        let wrap = p.wrap.as_ref();
        if !p.option {
            return self.write_value(&p.field.ty, val, compact, label, wrap);
        }
        let some = self.write_value(&p.field.ty, Val::reference(quote!(v)), compact, label, wrap);
        let put_marker = if tagged { quote!(put_tagged_struct_marker) } else { quote!(put_struct_marker) };
        let some_marker = match p.field.ty {
            FieldType::Struct(_) => p.nullable(tagged).branch(quote!(#rt::#put_marker(buf, true);), quote!()),
            _ => quote!(),
        };
        let null = match &p.field.ty {
            FieldType::String => quote!(#rt::put_nullable_string(buf, None, #compact).within(#name, #label)?;),
            FieldType::Bytes | FieldType::Records => {
                quote!(#rt::put_nullable_bytes(buf, None, #compact).within(#name, #label)?;)
            }
            FieldType::Array(_) => quote!(#rt::put_array_len(buf, None, #compact).within(#name, #label)?;),
            // A struct: inside the null branch, which only versions that allow null reach.
            _ => quote!(#rt::#put_marker(buf, false);),
        };
        let none =
            p.nullable(tagged).branch(null, quote!(return Err(#rt::null_not_allowed(version).within(#name, #label));));
        let r = val.by_ref();
        quote! {
            match #r {
                Some(v) => { #some_marker #some }
                None => { #none }
            }
        }
    }

    fn write_value(
        &self,
        ty: &FieldType,
        val: Val,
        compact: &TokenStream,
        label: &str,
        wrap: Option<&TokenStream>,
    ) -> TokenStream {
        let rt = self.rt;
        let name = quote!(Self::NAME);
        if wrap.is_some() && !ty.is_array() {
            // A newtype is written as the value it wraps.
            return self.write_value(ty, val.wrapped(), compact, label, None);
        }
        let (r, v, m) = (val.by_ref(), val.by_value(), val.receiver());
        match ty {
            FieldType::Bool => quote!(#rt::put_bool(buf, #v);),
            FieldType::Int8 => quote!(#rt::put_i8(buf, #v);),
            FieldType::Int16 => quote!(#rt::put_i16(buf, #v);),
            FieldType::Uint16 => quote!(#rt::put_u16(buf, #v);),
            FieldType::Int32 => quote!(#rt::put_i32(buf, #v);),
            FieldType::Uint32 => quote!(#rt::put_u32(buf, #v);),
            FieldType::Int64 => quote!(#rt::put_i64(buf, #v);),
            FieldType::Float64 => quote!(#rt::put_f64(buf, #v);),
            FieldType::Uuid => quote!(#rt::put_uuid(buf, #r);),
            FieldType::String => quote!(#rt::put_string(buf, #r, #compact).within(#name, #label)?;),
            FieldType::Bytes => quote!(#rt::put_bytes(buf, #r, #compact).within(#name, #label)?;),
            FieldType::Records => quote!(#rt::put_bytes(buf, #m.as_bytes(), #compact).within(#name, #label)?;),
            FieldType::Struct(_) => quote!(#rt::Encode::encode_into(#r, buf, version).within(#name, #label)?;),
            FieldType::Array(inner) if inner.fixed_size().is_some() => {
                quote!(#rt::put_fixed_array(buf, #r, #compact).within(#name, #label)?;)
            }
            FieldType::Array(inner) => {
                let elem = self.write_value(inner, Val::reference(quote!(el)), compact, label, wrap);
                quote! {
                    #rt::put_array_len(buf, Some(#m.len()), #compact).within(#name, #label)?;
                    for el in #m.iter() { #elem }
                }
            }
        }
    }

    /// Statements adding the field's encoded size to `acc`.
    fn size_field(&self, p: &Plan<'_>, val: Val, acc: &Ident, tagged: bool) -> TokenStream {
        let rt = self.rt;
        let (name, label) = (quote!(Self::NAME), &p.label);
        let compact = &p.compact;
        let wrap = p.wrap.as_ref();
        if !p.option {
            return self.size_value(&p.field.ty, val, compact, label, acc, wrap);
        }
        let some = self.size_value(&p.field.ty, Val::reference(quote!(v)), compact, label, acc, wrap);
        let is_struct = matches!(p.field.ty, FieldType::Struct(_));
        let nullable = p.nullable(tagged);
        let some_marker = if is_struct { nullable.branch(quote!(#acc += 1;), quote!()) } else { quote!() };
        let null = match &p.field.ty {
            FieldType::String => quote!(#acc += #rt::nullable_string_size(None, #compact);),
            FieldType::Bytes | FieldType::Records => quote!(#acc += #rt::nullable_bytes_size(None, #compact);),
            FieldType::Array(_) => quote!(#acc += #rt::array_len_size(None, #compact);),
            _ => quote!(#acc += 1;),
        };
        let none = nullable.branch(null, quote!(return Err(#rt::null_not_allowed(version).within(#name, #label));));
        let r = val.by_ref();
        quote! {
            match #r {
                Some(v) => { #some_marker #some }
                None => { #none }
            }
        }
    }

    fn size_value(
        &self,
        ty: &FieldType,
        val: Val,
        compact: &TokenStream,
        label: &str,
        acc: &Ident,
        wrap: Option<&TokenStream>,
    ) -> TokenStream {
        let rt = self.rt;
        let name = quote!(Self::NAME);
        if let Some(n) = ty.fixed_size() {
            let n = Literal::usize_unsuffixed(n);
            return quote!(#acc += #n;);
        }
        if wrap.is_some() && !ty.is_array() {
            return self.size_value(ty, val.wrapped(), compact, label, acc, None);
        }
        let (r, m) = (val.by_ref(), val.receiver());
        match ty {
            FieldType::String => quote!(#acc += #rt::string_size(#r, #compact);),
            FieldType::Bytes => quote!(#acc += #rt::bytes_size(#r, #compact);),
            FieldType::Records => quote!(#acc += #rt::bytes_size(#m.as_bytes(), #compact);),
            FieldType::Struct(_) => quote!(#acc += #rt::Encode::encoded_size(#r, version).within(#name, #label)?;),
            FieldType::Array(inner) => {
                let len = quote!(#acc += #rt::array_len_size(Some(#m.len()), #compact););
                let elems = match inner.fixed_size() {
                    Some(n) => {
                        let n = Literal::usize_unsuffixed(n);
                        quote!(#acc += #m.len() * #n;)
                    }
                    None => {
                        let elem = self.size_value(inner, Val::reference(quote!(el)), compact, label, acc, wrap);
                        quote!(for el in #m.iter() { #elem })
                    }
                };
                quote!(#len #elems)
            }
            _ => quote!(),
        }
    }

    /// An expression reading the field's Rust value from `buf`; `tagged` as for `write_field`.
    fn read_field(&self, p: &Plan<'_>, tagged: bool) -> TokenStream {
        let rt = self.rt;
        let (name, label) = (quote!(Self::NAME), &p.label);
        let compact = &p.compact;
        let wrap = p.wrap.as_ref();
        let plain = self.read_value(&p.field.ty, compact, label, wrap);
        if !p.option {
            return plain;
        }
        let nullable = match &p.field.ty {
            FieldType::String => match wrap {
                Some(w) => quote!(#rt::get_nullable_string(buf, #compact).within(#name, #label)?.map(#w)),
                None => quote!(#rt::get_nullable_string(buf, #compact).within(#name, #label)?),
            },
            FieldType::Bytes => quote!(#rt::get_nullable_bytes(buf, #compact).within(#name, #label)?),
            FieldType::Records => quote!(#rt::get_nullable_records(buf, #compact).within(#name, #label)?),
            FieldType::Array(inner) if inner.fixed_size().is_some() => {
                quote!(#rt::get_nullable_fixed_array(buf, #compact).within(#name, #label)?)
            }
            FieldType::Array(inner) => {
                let min = self.min_element_size(inner, compact);
                let elem = self.read_value(inner, compact, label, wrap);
                let collect = self.collect_elements(inner, &elem, label);
                quote! {
                    match #rt::get_array_len(buf, #compact, #min).within(#name, #label)? {
                        None => None,
                        Some(n) => Some(#collect),
                    }
                }
            }
            FieldType::Struct(_) => {
                let get_marker = if tagged { quote!(get_tagged_struct_marker) } else { quote!(get_struct_marker) };
                quote! {
                    if #rt::#get_marker(buf).within(#name, #label)? { Some(#plain) } else { None }
                }
            }
            // Other types cannot be nullable (validation rule 18); read them as present.
            _ => quote!(Some(#plain)),
        };
        match p.nullable(tagged) {
            Cond::Always => nullable,
            Cond::Never => quote!(Some(#plain)),
            Cond::Test(t) => quote!(if #t { #nullable } else { Some(#plain) }),
        }
    }

    /// The `Vec` of `n` elements read by `elem`, through the runtime's `decode_array`, which
    /// charges the message's memory budget and grows the vector as elements decode.
    fn collect_elements(&self, inner: &FieldType, elem: &TokenStream, label: &str) -> TokenStream {
        let rt = self.rt;
        if let FieldType::Struct(s) = inner {
            let t = type_ident(s);
            return quote!(#rt::decode_struct_array::<#t>(buf, n, version, Self::NAME, #label)?);
        }
        quote!(#rt::decode_array(buf, n, Self::NAME, #label, |buf| Ok(#elem))?)
    }

    fn read_value(
        &self,
        ty: &FieldType,
        compact: &TokenStream,
        label: &str,
        wrap: Option<&TokenStream>,
    ) -> TokenStream {
        let rt = self.rt;
        let name = quote!(Self::NAME);
        if let (Some(w), false) = (wrap, ty.is_array()) {
            let plain = self.read_value(ty, compact, label, None);
            return quote!(#w(#plain));
        }
        match ty {
            FieldType::Bool => quote!(#rt::get_bool(buf).within(#name, #label)?),
            FieldType::Int8 => quote!(#rt::get_i8(buf).within(#name, #label)?),
            FieldType::Int16 => quote!(#rt::get_i16(buf).within(#name, #label)?),
            FieldType::Uint16 => quote!(#rt::get_u16(buf).within(#name, #label)?),
            FieldType::Int32 => quote!(#rt::get_i32(buf).within(#name, #label)?),
            FieldType::Uint32 => quote!(#rt::get_u32(buf).within(#name, #label)?),
            FieldType::Int64 => quote!(#rt::get_i64(buf).within(#name, #label)?),
            FieldType::Float64 => quote!(#rt::get_f64(buf).within(#name, #label)?),
            FieldType::Uuid => quote!(#rt::get_uuid(buf).within(#name, #label)?),
            FieldType::String => quote!(#rt::get_string(buf, #compact).within(#name, #label)?),
            FieldType::Bytes => quote!(#rt::get_bytes(buf, #compact).within(#name, #label)?),
            FieldType::Records => quote!(#rt::get_records(buf, #compact).within(#name, #label)?),
            FieldType::Struct(s) => {
                let t = type_ident(s);
                quote!(<#t as #rt::Decode>::decode(buf, version).within(#name, #label)?)
            }
            FieldType::Array(inner) if inner.fixed_size().is_some() => {
                quote!(#rt::get_fixed_array(buf, #compact).within(#name, #label)?)
            }
            FieldType::Array(inner) => {
                let min = self.min_element_size(inner, compact);
                let elem = self.read_value(inner, compact, label, wrap);
                let collect = self.collect_elements(inner, &elem, label);
                quote! {{
                    let n = #rt::get_non_null_array_len(buf, #compact, #min).within(#name, #label)?;
                    #collect
                }}
            }
        }
    }
}

/// Writes a run of fixed-width fields into a stack array and hands it to the buffer at once:
/// one capacity check and copy instead of one per field.
fn write_fixed_run(run: &[Plan<'_>], rt: &TokenStream) -> TokenStream {
    let mut at = 0usize;
    let writes: Vec<TokenStream> = run
        .iter()
        .map(|p| {
            let ident = &p.ident;
            let (from, to) = (at, at + p.field.ty.fixed_size().unwrap_or(0));
            at = to;
            let (from, to) = (Literal::usize_unsuffixed(from), Literal::usize_unsuffixed(to));
            quote!(#rt::Fixed::write_be(self.#ident, &mut run[#from..#to]);)
        })
        .collect();
    let at = Literal::usize_unsuffixed(at);
    quote! {{
        let mut run = [0u8; #at];
        #(#writes)*
        #rt::put_raw(buf, &run);
    }}
}

/// `value != default` for the field, written so that type inference and cheap checks work
/// (`is_empty`, `is_some`) and no default value is built where it need not be.
pub(super) fn not_default(p: &Plan<'_>, value: TokenStream, rt: &TokenStream) -> TokenStream {
    let field = p.field;
    let option = is_option(field);
    match (&field.default, &field.ty) {
        (DefaultValue::Null, _) => quote!(#value.is_some()),
        (DefaultValue::Implicit | DefaultValue::Bool(false), FieldType::Bool) if !option => value,
        (DefaultValue::Bool(true), FieldType::Bool) if !option => quote!(!#value),
        (DefaultValue::Implicit, FieldType::Records) if option => quote!(#value.is_some()),
        (DefaultValue::Implicit, FieldType::Array(_) | FieldType::Bytes | FieldType::Records) => {
            if option {
                quote!(#value.as_ref().map_or(true, |v| !v.is_empty()))
            } else {
                quote!(!#value.is_empty())
            }
        }
        (DefaultValue::Implicit | DefaultValue::Str(_), FieldType::String) => {
            let text = match &field.default {
                DefaultValue::Str(t) => t.clone(),
                _ => String::new(),
            };
            if option {
                quote!(#value.as_deref() != Some(#text))
            } else {
                quote!(#value.as_str() != #text)
            }
        }
        _ => {
            let d = default_expr(field, rt, p.wrap.as_ref());
            quote!(#value != #d)
        }
    }
}

/// The local a decoder reads a field into: prefixed, so that no field name (`version`,
/// `value`, `count`, ...) can shadow the decoder's own variables.
fn local_ident(field: &Ident) -> Ident {
    format_ident!("f_{}", field.to_string().trim_start_matches("r#"))
}

/// Schema prose as literal Markdown text: brackets, angle brackets and backslashes are escaped (`Array[0]` would be an intra-doc link, `<T>` an HTML tag), and a URL becomes an
/// autolink, so `cargo doc` renders what the schema says and warns about none of it.
fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let url_end = word.trim_end_matches(['.', ',', ';', ':', ')']).len();
        if word.starts_with("http://") || word.starts_with("https://") {
            out.push('<');
            out.push_str(&word[..url_end]);
            out.push('>');
            out.push_str(&word[url_end..]);
            continue;
        }
        for c in word.chars() {
            if matches!(c, '[' | ']' | '<' | '>' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

fn field_doc(field: &Field) -> String {
    let mut doc = String::from(" ");
    if let Some(about) = &field.about {
        doc.push_str(&markdown_text(about.trim()));
        if !doc.ends_with('.') {
            doc.push('.');
        }
        doc.push(' ');
    }
    doc.push_str(&format!("Versions {}", field.versions));
    if let Some(n) = field.nullable_versions {
        doc.push_str(&format!("; nullable {}", n));
    }
    if let (Some(t), Some(tag)) = (field.tagged_versions, field.tag) {
        doc.push_str(&format!("; tag {tag} in {}", t));
    }
    doc.push('.');
    doc
}

#[cfg(test)]
mod doc_tests {
    use super::markdown_text;

    #[test]
    fn schema_prose_is_literal_markdown() {
        assert_eq!(
            markdown_text("the first entry, Array[0], of Map<K, V>"),
            r"the first entry, Array\[0\], of Map\<K, V\>"
        );
        assert_eq!(markdown_text(r"a \ b"), r"a \\ b");
        assert_eq!(markdown_text("see https://kafka.apache.org/protocol."), "see <https://kafka.apache.org/protocol>.");
    }
}
