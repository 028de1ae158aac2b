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
        match range.and_then(|r| r.intersect(&within)) {
            None => Cond::Never,
            Some(hit) => bounds(hit, within, quote!(>=), quote!(<=), |l, h| quote!(#l && #h)).unwrap_or(Cond::Always),
        }
    }

    /// The test for "outside `range`" given that `version` lies in `within`: where a field
    /// does not exist. Written as comparisons (`version < 3 || version > 7`), never `!(..)`.
    pub fn outside(range: Versions, within: Versions) -> Cond {
        match range.intersect(&within) {
            None => Cond::Always,
            Some(hit) => bounds(hit, within, quote!(<), quote!(>), |b, a| quote!((#b || #a))).unwrap_or(Cond::Never),
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

/// The comparisons that cut `hit` out of `within`: `version <low> hit.min` where `hit` starts
/// later, `version <high> hit.max` where it ends earlier, both together by `join` (`outside`
/// parenthesises its `||`, as it is only ever an operand of `&&`); `None` when `hit` is all of
/// `within`.
fn bounds(
    hit: Versions,
    within: Versions,
    low: TokenStream,
    high: TokenStream,
    join: impl FnOnce(TokenStream, TokenStream) -> TokenStream,
) -> Option<Cond> {
    let below = (hit.min > within.min).then(|| {
        let v = Literal::i16_unsuffixed(hit.min);
        quote!(version #low #v)
    });
    let above = (hit.max < within.max).then(|| {
        let v = Literal::i16_unsuffixed(hit.max);
        quote!(version #high #v)
    });
    match (below, above) {
        (None, None) => None,
        (Some(t), None) | (None, Some(t)) => Some(Cond::Test(t)),
        (Some(b), Some(a)) => Some(Cond::Test(join(b, a))),
    }
}
