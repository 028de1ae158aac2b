//! `rt::json::Json` for a struct: Kafka's JSON converters' rules, in two small functions that
//! call the runtime's `put` and `field` (neither generic nor inlined) once per field.

use proc_macro2::TokenStream;
use quote::quote;

use super::cond::Cond;
use super::structs::{not_default, Plan, StructCtx};
use super::types::default_expr;

impl StructCtx<'_> {
    pub(super) fn emit_json(&self, plans: &[Plan<'_>]) -> TokenStream {
        let rt = self.rt;
        let ty = super::names::type_ident(self.name);
        let check = if self.is_root {
            let range = super::range_lit(self.within);
            quote!(#rt::json::check_version(version, #range)?;)
        } else {
            quote!()
        };
        let puts = plans.iter().map(|p| {
            let ident = &p.ident;
            let key = crate::ir::json_key(&p.field.name);
            let put = quote! {
                #rt::json::put(&mut object, #key, #rt::json::Json::write_json::<S>(&self.#ident, version).within_json(Self::NAME, #key)?);
            };
            // Untagged where it is sent so; tagged only when not at its default.
            let regular = p.regular.branch(put.clone(), quote!());
            let tagged = match &p.tagged {
                Cond::Never => quote!(),
                cond => {
                    let test = cond.and(not_default(p, quote!(self.#ident), rt));
                    quote!(if #test { #put })
                }
            };
            quote!(#regular #tagged)
        });
        let gets = plans.iter().map(|p| {
            let ident = &p.ident;
            let key = crate::ir::json_key(&p.field.name);
            let default = default_expr(p.field, rt, p.wrap.as_ref());
            let missing = quote!(return Err(#rt::json::missing(version).within(Self::NAME, #key)));
            // Missing: an error where the version requires the field, else its default.
            let none = match &p.regular {
                Cond::Always => quote!(None => #missing,),
                Cond::Never => quote!(None => #default,),
                Cond::Test(t) => quote!(None if #t => #missing, None => #default,),
            };
            quote! {
                #ident: match #rt::json::field(object, #key) {
                    Some(v) => #rt::json::Json::read_json::<S>(v, version).within_json(Self::NAME, #key)?,
                    #none
                },
            }
        });
        let (put_unknown, get_unknown) = if self.has_tag_buffer() {
            (
                quote!(#rt::json::put_unknown_tags(&mut object, &self.unknown_tagged_fields);),
                quote!(unknown_tagged_fields: #rt::json::get_unknown_tags(object).within_json(Self::NAME, #rt::json::UNKNOWN_TAGS_KEY)?,),
            )
        } else {
            (quote!(), quote!())
        };
        quote! {
            impl #rt::json::Json for #ty {
                // Generic (see `rt::json::Json`), so compiled only where used; never inlined:
                // JSON is not a hot path.
                #[inline(never)]
                fn write_json<S: #rt::json::Style>(&self, version: i16) -> Result<#rt::json::Value, #rt::json::JsonError> {
                    use #rt::json::JsonWithin as _;
                    #check
                    let mut object = #rt::json::Map::new();
                    #(#puts)*
                    #put_unknown
                    Ok(#rt::json::Value::Object(object))
                }
                #[inline(never)]
                fn read_json<S: #rt::json::Style>(value: &#rt::json::Value, version: i16) -> Result<Self, #rt::json::JsonError> {
                    use #rt::json::JsonWithin as _;
                    #check
                    let object = #rt::json::object(value)?;
                    Ok(#ty {
                        #(#gets)*
                        #get_unknown
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::json_key;

    #[test]
    fn keys_are_kafkas_camel_case() {
        assert_eq!(json_key("ErrorCode"), "errorCode");
        assert_eq!(json_key("KRaftVersion"), "kRaftVersion");
        assert_eq!(json_key("IPAddress"), "iPAddress");
    }
}
