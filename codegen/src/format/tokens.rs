//! Token trees as the plain layout prints them: Rust's multi-character operators whole, a
//! lifetime one token, and whether a space goes before each token when it does not start a
//! line. A space is left out only where the text still lexes to the same tokens (no two words
//! or numbers run together, no operator made of two), so the layout cannot change the code.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// What a token is, for spacing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Word,
    Literal,
    Lifetime,
    Op,
    Open,
    Close,
}

/// One token's text, and whether a space goes before it.
#[derive(Debug)]
pub(super) struct Tok {
    pub text: String,
    pub kind: Kind,
    pub space: bool,
}

impl Tok {
    fn new(text: impl Into<String>, kind: Kind) -> Self {
        Tok { text: text.into(), kind, space: true }
    }

    /// Its width on a line that it does not start.
    pub fn width(&self) -> usize {
        self.text.len() + usize::from(self.space)
    }
}

/// A token, or a delimited group of them.
#[derive(Debug)]
pub(super) enum Node {
    Tok(Tok),
    Group(Group),
}

#[derive(Debug)]
pub(super) struct Group {
    pub delimiter: Delimiter,
    pub open: Tok,
    pub close: Tok,
    pub children: Vec<Node>,
    /// Whether a `{ … }` block is in it at any depth (such a group spans lines).
    pub has_block: bool,
}

impl Node {
    /// Its width on one line, the space before it included.
    pub fn width(&self) -> usize {
        match self {
            Node::Tok(t) => t.width(),
            Node::Group(g) => g.open.width() + g.children.iter().map(Node::width).sum::<usize>() + g.close.width(),
        }
    }

    pub fn is_any_op(&self) -> bool {
        matches!(self, Node::Tok(t) if t.kind == Kind::Op)
    }

    pub fn is_op(&self, op: &str) -> bool {
        matches!(self, Node::Tok(t) if t.kind == Kind::Op && t.text == op)
    }

    pub fn is_word(&self, word: &str) -> bool {
        matches!(self, Node::Tok(t) if t.kind == Kind::Word && t.text == word)
    }

    pub fn is_block(&self) -> bool {
        matches!(self, Node::Group(g) if g.delimiter == Delimiter::Brace)
    }

    pub fn has_block(&self) -> bool {
        match self {
            Node::Tok(_) => false,
            Node::Group(g) => g.delimiter == Delimiter::Brace || g.has_block,
        }
    }
}

/// `tokens` as nodes, spaced.
pub(super) fn nodes(tokens: TokenStream) -> Vec<Node> {
    let mut nodes = build(tokens);
    Spacer::default().walk(&mut nodes);
    nodes
}

/// Rust's operators of more than one character, longest first.
const OPERATORS: [&str; 24] = [
    "..=", "...", "<<=", ">>=", "::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "..", "+=", "-=", "*=", "/=",
    "%=", "^=", "&=", "|=", "<<", ">>",
];

fn build(tokens: TokenStream) -> Vec<Node> {
    let mut out = Vec::new();
    let mut trees = tokens.into_iter().peekable();
    while let Some(tree) = trees.next() {
        match tree {
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => out.extend(build(g.stream())),
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    _ => ("{", "}"),
                };
                let children = build(g.stream());
                let has_block = children.iter().any(Node::has_block);
                out.push(Node::Group(Group {
                    delimiter: g.delimiter(),
                    open: Tok::new(open, Kind::Open),
                    close: Tok::new(close, Kind::Close),
                    children,
                    has_block,
                }));
            }
            TokenTree::Ident(i) => out.push(Node::Tok(Tok::new(i.to_string(), Kind::Word))),
            TokenTree::Literal(l) => out.push(Node::Tok(Tok::new(l.to_string(), Kind::Literal))),
            TokenTree::Punct(p) => {
                // A run of joined punctuation, split into operators.
                let mut run = p.as_char().to_string();
                let mut joint = p.spacing() == Spacing::Joint;
                while joint {
                    let Some(TokenTree::Punct(next)) = trees.peek() else { break };
                    run.push(next.as_char());
                    joint = next.spacing() == Spacing::Joint;
                    trees.next();
                }
                let mut rest = run.as_str();
                while !rest.is_empty() {
                    let op = OPERATORS.iter().find(|op| rest.starts_with(**op)).copied().unwrap_or(&rest[..1]);
                    rest = &rest[op.len()..];
                    if op == "'" && rest.is_empty() {
                        if let Some(TokenTree::Ident(name)) = trees.peek() {
                            out.push(Node::Tok(Tok::new(format!("'{name}"), Kind::Lifetime)));
                            trees.next();
                            continue;
                        }
                    }
                    out.push(Node::Tok(Tok::new(op, Kind::Op)));
                }
            }
        }
    }
    out
}

/// Keywords after which an expression, pattern or type starts (so `&`, `*`, `-`, `!` and `|`
/// after them are prefixes), and before which a `(` keeps its space.
const LEADING_KEYWORDS: [&str; 17] = [
    "as", "break", "dyn", "else", "for", "if", "impl", "in", "let", "loop", "match", "move", "mut", "ref", "return",
    "where", "while",
];

/// Keywords whose next word's `<` opens generic parameters.
const DEFINING_KEYWORDS: [&str; 5] = ["fn", "struct", "enum", "type", "trait"];

/// What the previous token leaves for the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum After {
    /// Nothing yet: the start of a group or file.
    #[default]
    Start,
    /// A value, name or type ends here: an operator after it is binary.
    Operand,
    /// An operator, `,` or `;`, or a leading keyword: what follows starts an operand.
    Operator,
    /// A prefix (`&`, `*`, `-`, `!`, a closure's `|`, a generic `<`, `.`, `::`, `#`, a
    /// macro's `!`): the next token sits against it.
    Glued,
}

#[derive(Default)]
struct Spacer {
    after: After,
    /// The previous token and the one before, for `fn name<` and `name!`.
    prev: Option<(Kind, String)>,
    prev2: Option<(Kind, String)>,
    /// Generic `<` still open in this group.
    generics: usize,
    /// Inside a closure's `|…|`.
    closure: bool,
}

impl Spacer {
    fn walk(&mut self, nodes: &mut [Node]) {
        for node in nodes {
            match node {
                Node::Tok(t) => self.token(t),
                Node::Group(g) => {
                    self.token(&mut g.open);
                    let outer = (std::mem::take(&mut self.generics), std::mem::take(&mut self.closure));
                    self.walk(&mut g.children);
                    (self.generics, self.closure) = outer;
                    self.token(&mut g.close);
                }
            }
        }
    }

    fn prev_is(&self, kind: Kind, text: &str) -> bool {
        self.prev.as_ref().is_some_and(|(k, t)| *k == kind && t == text)
    }

    fn prev_word(&self) -> Option<&str> {
        self.prev.as_ref().filter(|(k, _)| *k == Kind::Word).map(|(_, t)| t.as_str())
    }

    /// Sets `t.space` and what it leaves for the next token.
    fn token(&mut self, t: &mut Tok) {
        let after = self.after;
        let prefix_position = matches!(after, After::Start | After::Operator | After::Glued);
        let (space, next) = match t.kind {
            Kind::Word => {
                let leading = LEADING_KEYWORDS.contains(&t.text.as_str());
                (after != After::Glued && after != After::Start, if leading { After::Operator } else { After::Operand })
            }
            Kind::Literal => (after != After::Glued && after != After::Start, After::Operand),
            // `'static [u8]`, `'a + Send`: a lifetime is followed as a keyword is.
            Kind::Lifetime => (after != After::Glued && after != After::Start, After::Operator),
            Kind::Open => {
                let call = after == After::Operand && !self.prev_word().is_some_and(|w| LEADING_KEYWORDS.contains(&w));
                let space = match t.text.as_str() {
                    "{" => after != After::Start,
                    _ => !(call || after == After::Glued || after == After::Start),
                };
                (space, After::Start)
            }
            Kind::Close => (t.text == "}", After::Operand),
            Kind::Op => self.op(&t.text, after, prefix_position),
        };
        t.space = space || self.would_join(t);
        self.after = next;
        self.prev2 = self.prev.take();
        self.prev = Some((t.kind, t.text.clone()));
    }

    /// Whether `t`, written against the operator before it, would lex as another operator with
    /// it (`..` and `=>` as `..=` and `>`). Generic `>`s may close together (`>>`).
    fn would_join(&self, t: &Tok) -> bool {
        let Some((Kind::Op, prev)) = &self.prev else { return false };
        if t.kind != Kind::Op || t.text.chars().all(|c| c == '>') {
            return false;
        }
        let joined = format!("{prev}{}", t.text);
        OPERATORS.iter().any(|op| op.len() > prev.len() && joined.starts_with(op))
    }

    fn op(&mut self, op: &str, after: After, prefix_position: bool) -> (bool, After) {
        let glued_before = after == After::Glued || after == After::Start;
        match op {
            "," => (false, After::Operator),
            ";" => {
                // A `<` taken for a generic one was a comparison after all.
                self.generics = 0;
                (false, After::Operator)
            }
            "?" => (false, After::Operand),
            ":" => (false, After::Operator),
            // A float's `.` must not join the number before it.
            "." => (self.prev.as_ref().is_some_and(|(k, _)| *k == Kind::Literal), After::Glued),
            ".." | "..=" => (false, After::Glued),
            "::" => (!(glued_before || after == After::Operand), After::Glued),
            "#" => (!glued_before, After::Glued),
            "!" if after == After::Operand && self.prev_word().is_some() => (false, After::Glued),
            "<" if self.opens_generics(after) => {
                self.generics += 1;
                let named = after == After::Operand || self.prev_word().is_some();
                (!(glued_before || named), After::Glued)
            }
            ">" | ">>" if self.generics >= op.len() => {
                self.generics -= op.len();
                (false, After::Operand)
            }
            "|" if self.closure => {
                self.closure = false;
                (false, After::Operator)
            }
            "|" if prefix_position => {
                self.closure = true;
                (!glued_before, After::Glued)
            }
            "||" if prefix_position => (!glued_before, After::Operator),
            "&" | "&&" | "*" | "-" | "!" if prefix_position => (!glued_before, After::Glued),
            _ => (!glued_before, After::Operator),
        }
    }

    /// Whether a `<` here opens generic parameters or arguments rather than compares.
    fn opens_generics(&self, after: After) -> bool {
        if self.prev_is(Kind::Op, "::") || matches!(after, After::Start | After::Operator | After::Glued) {
            // A turbofish, or a qualified path (`<T as Trait>::`) where no comparison can be.
            return true;
        }
        let Some(word) = self.prev_word() else { return false };
        let defined =
            self.prev2.as_ref().is_some_and(|(k, t)| *k == Kind::Word && DEFINING_KEYWORDS.contains(&t.as_str()));
        word.starts_with(|c: char| c.is_ascii_uppercase()) || defined || word == "impl" || word == "for"
    }
}
