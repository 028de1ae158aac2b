//! The plain layout of a build script's `OUT_DIR` code: the tokens as they are, spaced as Rust
//! is usually written, on lines a reader can follow after jumping to a definition. A
//! statement, item, field or match arm a line, blocks indented; a line longer than rustfmt
//! would leave has its widest bracket broken, a part a line, until it fits (only a long
//! literal, such as a doc string, stays over). A walk of the token trees: no parsing, no
//! syn, next to nothing for a build script.

use proc_macro2::{Delimiter, TokenStream};

use super::tokens::{nodes, Node, Tok};

/// The longest line left where a break can shorten it: rustfmt's default `max_width`.
pub(crate) const WIDTH: usize = 100;
const INDENT: &str = "    ";

/// `tokens` laid out on lines (see the module docs).
pub(crate) fn plain(tokens: TokenStream) -> String {
    let mut printer = Printer { out: String::new(), depth: 0, col: 0 };
    printer.lines(&nodes(tokens));
    printer.out
}

/// Where the lines of a block's (or the file's) contents end: after a statement's `;`, an
/// item's block, an attribute, or in a list of parts (fields, variants, match arms, a struct
/// literal's fields) after each `,`.
fn lines(nodes: &[Node]) -> Vec<&[Node]> {
    // A block with no `;` and no `fn` at its top level holds comma-separated parts.
    let list = !nodes.iter().any(|n| n.is_op(";") || n.is_word("fn"));
    let mut out = Vec::new();
    let mut start = 0;
    for (i, node) in nodes.iter().enumerate() {
        let next = nodes.get(i + 1);
        // `} else`, `};`, `},`, `}.await`, `} =>`: what follows a block stays on its line (not
        // an attribute of the next item).
        let continued = next.is_some_and(|n| n.is_any_op() && !n.is_op("#") || n.is_word("else"));
        let ends =
            node.is_op(";") || list && node.is_op(",") || node.is_block() && !continued || is_attribute(nodes, i);
        if ends {
            out.push(&nodes[start..=i]);
            start = i + 1;
        }
    }
    if start < nodes.len() {
        out.push(&nodes[start..]);
    }
    out
}

/// Whether `nodes[i]` is the `[…]` of an attribute (`#[…]`, `#![…]`).
fn is_attribute(nodes: &[Node], i: usize) -> bool {
    let bracket = matches!(&nodes[i], Node::Group(g) if g.delimiter == Delimiter::Bracket);
    bracket && i > 0 && (nodes[i - 1].is_op("#") || i > 1 && nodes[i - 1].is_op("!") && nodes[i - 2].is_op("#"))
}

struct Printer {
    out: String,
    depth: usize,
    /// The column the next token starts at; 0 at the start of a line, before its indent.
    col: usize,
}

impl Printer {
    fn lines(&mut self, nodes: &[Node]) {
        for line in lines(nodes) {
            self.run(line);
            self.newline();
        }
    }

    fn tok(&mut self, t: &Tok) {
        if self.col == 0 {
            for _ in 0..self.depth {
                self.out.push_str(INDENT);
            }
            self.col = self.depth * INDENT.len();
        } else if t.space {
            self.out.push(' ');
            self.col += 1;
        }
        self.out.push_str(&t.text);
        self.col += t.text.len();
    }

    fn newline(&mut self) {
        if self.col > 0 {
            self.out.push('\n');
            self.col = 0;
        }
    }

    /// Nodes on the current line, broken only by the `{ … }` blocks among them and, where the
    /// rest of the line would not fit, at the widest bracket.
    fn run(&mut self, nodes: &[Node]) {
        let mut rest = nodes;
        while let Some(at) = rest.iter().position(Node::has_block) {
            self.stretch(&rest[..at], true);
            self.spanning(&rest[at]);
            rest = &rest[at + 1..];
        }
        self.stretch(rest, false);
    }

    /// A node that spans lines: a block, a part of it a line; a bracket holding a block
    /// written around its contents.
    fn spanning(&mut self, node: &Node) {
        let Node::Group(g) = node else { return self.flat(node) };
        self.tok(&g.open);
        if g.delimiter != Delimiter::Brace {
            self.run(&g.children);
        } else if g.children.is_empty() {
            self.out.push('}');
            self.col += 1;
            return;
        } else {
            self.newline();
            self.depth += 1;
            self.lines(&g.children);
            self.depth -= 1;
            self.newline();
        }
        self.tok(&g.close);
    }

    /// The column after `nodes` written flat from here.
    fn end_of(&self, nodes: &[Node]) -> usize {
        let Some(first) = nodes.first() else { return self.col };
        let width: usize = nodes.iter().map(Node::width).sum();
        if self.col == 0 {
            self.depth * INDENT.len() + width - usize::from(leading_space(first))
        } else {
            self.col + width
        }
    }

    /// Nodes holding no block: on this line if they fit (with the ` {` of a block after them).
    /// Else broken where rustfmt would: a method chain before its last call, the widest
    /// bracket that opens on this line (a part a line), a binary operator's right-hand side
    /// (`|`, `||`, `&&`, `+`, or after `=>` or `=`) on the next line, an attribute's arguments;
    /// the widest bracket at all when nothing else is left.
    fn stretch(&mut self, nodes: &[Node], before_block: bool) {
        let tail = if before_block { 2 } else { 0 };
        if nodes.is_empty() || self.end_of(nodes) + tail <= WIDTH {
            return nodes.iter().for_each(|n| self.flat(n));
        }
        let fits = |at: usize| self.end_of(&nodes[..at]) <= WIDTH;
        // Whether `nodes[at..]` fits on a line of its own, one deeper.
        let rest_fits = |at: usize| {
            let rest: usize = nodes[at..].iter().map(Node::width).sum();
            (self.depth + 1) * INDENT.len() + rest - usize::from(leading_space(&nodes[at])) + tail <= WIDTH
        };
        let chain = (1..nodes.len()).rev().find(|&at| nodes[at].is_op(".") && fits(at) && rest_fits(at));
        if let Some(at) = chain {
            return self.continue_at(nodes, at, before_block);
        }
        let brackets = || nodes.iter().enumerate().filter(|(i, n)| breakable(nodes, *i, n));
        let widest = |(i, n): &(usize, &Node)| (n.width(), std::cmp::Reverse(*i));
        let opens_here = |at: usize| match &nodes[at] {
            Node::Group(g) => self.end_of(&nodes[..at]) + g.open.width() <= WIDTH,
            Node::Tok(_) => false,
        };
        if let Some((at, _)) = brackets().filter(|(at, _)| opens_here(*at)).max_by_key(widest) {
            return self.break_bracket(nodes, at, before_block);
        }
        let operator = (1..nodes.len()).rev().find_map(|at| {
            let before = ["|", "||", "&&", "+"].iter().any(|op| nodes[at].is_op(op));
            let after = nodes[at - 1].is_op("=>") || nodes[at - 1].is_op("=");
            // Worth it when what moves fits, or can be broken further.
            let helps = rest_fits(at) || nodes[at..].iter().enumerate().any(|(i, n)| breakable(&nodes[at..], i, n));
            (before || after).then_some(at).filter(|&at| fits(at) && helps)
        });
        if let Some(at) = operator {
            return self.continue_at(nodes, at, before_block);
        }
        if let (Some(Node::Group(attribute)), true) = (nodes.last(), is_attribute(nodes, nodes.len() - 1)) {
            nodes[..nodes.len() - 1].iter().for_each(|n| self.flat(n));
            self.tok(&attribute.open);
            self.stretch(&attribute.children, false);
            return self.tok(&attribute.close);
        }
        match brackets().max_by_key(widest) {
            Some((at, _)) => self.break_bracket(nodes, at, before_block),
            None => nodes.iter().for_each(|n| self.flat(n)),
        }
    }

    /// `nodes` up to `at` on this line, the rest on the next, indented once more.
    fn continue_at(&mut self, nodes: &[Node], at: usize, before_block: bool) {
        self.stretch(&nodes[..at], false);
        self.newline();
        self.depth += 1;
        self.stretch(&nodes[at..], before_block);
        self.depth -= 1;
    }

    /// `nodes` with the bracket at `at` broken: its parts a line each, one deeper, and what
    /// follows it after its closing bracket.
    fn break_bracket(&mut self, nodes: &[Node], at: usize, before_block: bool) {
        let Node::Group(group) = &nodes[at] else { return };
        nodes[..at].iter().for_each(|n| self.flat(n));
        self.tok(&group.open);
        self.newline();
        self.depth += 1;
        for part in group.children.split_inclusive(|n| n.is_op(",")) {
            self.stretch(part, false);
            self.newline();
        }
        self.depth -= 1;
        self.tok(&group.close);
        self.stretch(&nodes[at + 1..], before_block);
    }

    fn flat(&mut self, node: &Node) {
        match node {
            Node::Tok(t) => self.tok(t),
            Node::Group(g) => {
                self.tok(&g.open);
                g.children.iter().for_each(|n| self.flat(n));
                self.tok(&g.close);
            }
        }
    }
}

fn leading_space(node: &Node) -> bool {
    match node {
        Node::Tok(t) => t.space,
        Node::Group(g) => g.open.space,
    }
}

/// A `(…)` or `[…]` with something in it that is not an attribute's.
fn breakable(nodes: &[Node], i: usize, node: &Node) -> bool {
    matches!(node, Node::Group(g) if g.delimiter != Delimiter::Brace && !g.children.is_empty())
        && !is_attribute(nodes, i)
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn code_is_spaced_as_written_and_long_lines_are_broken() {
        let tokens = quote! {
            #[doc = " A pick."]
            pub fn pick<'a, T: Into<u8>>(items: &'a [T], n: usize, flag: bool) -> Option<&'a T> {
                if n < items.len() && !flag { items.get(n) } else { None }
            }
            pub const ALL: &'static [Key] = &[Key::Produce, Key::Fetch, Key::ListOffsets, Key::Metadata, Key::OffsetCommit];
            impl<T> Holder<T> {
                fn sum(&self) -> Vec<Vec<u8>> {
                    let total_count = self.items.iter().map(|x| x.0 + 1).filter(|n| *n > 2).collect::<Vec<_>>().len();
                    match total_count { ..=2 => Vec::new(), 3.. => vec![vec![0u8; total_count]] }
                }
            }
        };
        let expected = r#"#[doc = " A pick."]
pub fn pick<'a, T: Into<u8>>(items: &'a [T], n: usize, flag: bool) -> Option<&'a T> {
    if n < items.len() && !flag {
        items.get(n)
    } else {
        None
    }
}
pub const ALL: &'static [Key] = &[
    Key::Produce,
    Key::Fetch,
    Key::ListOffsets,
    Key::Metadata,
    Key::OffsetCommit
];
impl<T> Holder<T> {
    fn sum(&self) -> Vec<Vec<u8>> {
        let total_count = self.items.iter().map(|x| x.0 + 1).filter(|n| *n > 2).collect::<Vec<_>>()
            .len();
        match total_count {
            ..=2 => Vec::new(),
            3.. => vec![vec![0u8; total_count]]
        }
    }
}
"#;
        assert_eq!(plain(tokens), expected);
    }

    /// Tokens whose spacing matters: each snippet, laid out, is the same code (prettyplease
    /// prints both alike).
    #[cfg(feature = "pretty")]
    #[test]
    fn no_space_left_out_changes_the_code() {
        let snippets = [
            quote! { fn f() { let r = 3..; match x { 3.. => 1, ..=2 => 0, _ => 2 } } },
            quote! { fn f() { let a = (x as i32) < y; let b = t.0.1; let c = 1.max(2); let d = 1.0; } },
            quote! { fn f() { let a = &&x; let b = & &x; let c = - -1; let d = !!x; let e = *&x; } },
            quote! { fn f() { let a = |x| -x; let b = || {}; let c = move |(a, b)| a | b; let d = a || b; } },
            quote! { fn f() { let a = <<T as A>::B as C>::f(); let b: Vec<Vec<u8>> = Vec::new(); x = ..; } },
            quote! { fn f(a: ::core::primitive::u8, b: &::core::primitive::u8) -> ! { loop {} } },
            quote! { #![allow(x)] static S: &'static [u8] = &[1]; fn f() { matches!(x, Some(_)); if !x && a != b {} } },
            quote! { type F = dyn for<'a> Fn(&'a u8) -> *const u8; fn f() { x?.y()?; a = b >> 2; c >>= 1; d = e < f; } },
            quote! { fn f() { if A < b { g() } else if c > D { h() } let x = S::<T> { a: 1 }; } },
        ];
        for tokens in snippets {
            let laid_out = plain(tokens.clone());
            let parsed = syn::parse_file(&laid_out).unwrap_or_else(|e| panic!("{e}:\n{laid_out}"));
            let original: syn::File = syn::parse2(tokens).unwrap();
            assert_eq!(prettyplease::unparse(&parsed), prettyplease::unparse(&original), "{laid_out}");
        }
    }
}
