//! Version conditions: the shortest test of `version` that holds exactly on a range, given
//! the versions that can reach the code at all.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::ir::Versions;

/// A version test, simplified against the versions that can reach it.
#[derive(Debug, Clone)]
pub enum Cond {
    Always,
    Never,
    Test(TokenStream),
}

impl Cond {
    /// The test for `range` given that `version` is known to lie in `within`.
    pub fn new(range: Option<Versions>, within: Versions) -> Cond {
        let Some(range) = range else { return Cond::Never };
        let Some(hit) = range.intersect(&within) else { return Cond::Never };
        let low = (hit.min > within.min).then(|| {
            let v = Literal::i16_unsuffixed(hit.min);
            quote!(version >= #v)
        });
        let high = (hit.max < within.max).then(|| {
            let v = Literal::i16_unsuffixed(hit.max);
            quote!(version <= #v)
        });
        match (low, high) {
            (None, None) => Cond::Always,
            (Some(l), None) => Cond::Test(l),
            (None, Some(h)) => Cond::Test(h),
            (Some(l), Some(h)) => Cond::Test(quote!(#l && #h)),
        }
    }

    /// The test for "outside `range`" given that `version` lies in `within`: where a field
    /// does not exist. Written as comparisons (`version < 3 || version > 7`), never `!(..)`.
    pub fn outside(range: Versions, within: Versions) -> Cond {
        let Some(hit) = range.intersect(&within) else { return Cond::Always };
        let below = (hit.min > within.min).then(|| {
            let v = Literal::i16_unsuffixed(hit.min);
            quote!(version < #v)
        });
        let above = (hit.max < within.max).then(|| {
            let v = Literal::i16_unsuffixed(hit.max);
            quote!(version > #v)
        });
        match (below, above) {
            (None, None) => Cond::Never,
            (Some(b), None) => Cond::Test(b),
            (None, Some(a)) => Cond::Test(a),
            // Parenthesised: it is only ever used as the left side of `&&`.
            (Some(b), Some(a)) => Cond::Test(quote!((#b || #a))),
        }
    }

    /// The condition as a boolean expression.
    pub fn expr(&self) -> TokenStream {
        match self {
            Cond::Always => quote!(true),
            Cond::Never => quote!(false),
            Cond::Test(t) => t.clone(),
        }
    }

    /// `cond && other`, folded when the condition is constant.
    pub fn and(&self, other: TokenStream) -> TokenStream {
        match self {
            Cond::Always => other,
            Cond::Never => quote!(false),
            Cond::Test(t) => quote!(#t && #other),
        }
    }

    /// `if cond { then } else { otherwise }`, folded when the condition is constant.
    pub fn branch(&self, then: TokenStream, otherwise: TokenStream) -> TokenStream {
        match self {
            Cond::Always => then,
            Cond::Never => otherwise,
            Cond::Test(t) => {
                if otherwise.is_empty() {
                    quote!(if #t { #then })
                } else {
                    quote!(if #t { #then } else { #otherwise })
                }
            }
        }
    }

    /// The expression `if cond { then } else { otherwise }`, folded when the condition is constant.
    pub fn branch_expr(&self, then: TokenStream, otherwise: TokenStream) -> TokenStream {
        match self {
            Cond::Always => then,
            Cond::Never => otherwise,
            Cond::Test(t) => quote!(if #t { #then } else { #otherwise }),
        }
    }
}
