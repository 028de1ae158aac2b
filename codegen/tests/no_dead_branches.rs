//! Generated code has no branch that cannot run: no version test that the version tests
//! enclosing it already decide. Checked over every schema of Kafka's corpus (and the test and
//! extra folders), by parsing the generated files and following the versions each `if` can
//! still see.

use std::path::{Path, PathBuf};

use kwire_codegen::Config;
use syn::visit::Visit;
use syn::{BinOp, Expr, ExprIf, Lit};

/// A set of versions: sorted, disjoint, inclusive ranges.
#[derive(Debug, Clone, PartialEq)]
struct Set(Vec<(i32, i32)>);

const ALL: (i32, i32) = (i16::MIN as i32, i16::MAX as i32);

impl Set {
    fn all() -> Set {
        Set(vec![ALL])
    }
    fn range(lo: i32, hi: i32) -> Set {
        Set(if lo <= hi { vec![(lo, hi)] } else { Vec::new() })
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn intersect(&self, other: &Set) -> Set {
        let mut out = Vec::new();
        for &(a, b) in &self.0 {
            for &(c, d) in &other.0 {
                let (lo, hi) = (a.max(c), b.min(d));
                if lo <= hi {
                    out.push((lo, hi));
                }
            }
        }
        out.sort_unstable();
        Set(out)
    }
    fn complement(&self) -> Set {
        let mut out = Vec::new();
        let mut next = ALL.0;
        for &(a, b) in &self.0 {
            if a > next {
                out.push((next, a - 1));
            }
            next = b + 1;
        }
        if next <= ALL.1 {
            out.push((next, ALL.1));
        }
        Set(out)
    }
    fn union(&self, other: &Set) -> Set {
        self.complement().intersect(&other.complement()).complement()
    }
    fn minus(&self, other: &Set) -> Set {
        self.intersect(&other.complement())
    }
}

fn int(e: &Expr) -> Option<i32> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => int(&u.expr).map(|v| -v),
        _ => None,
    }
}

fn is_version(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("version"))
}

/// The versions for which `e` holds, if `e` is a pure test of `version`.
fn version_test(e: &Expr) -> Option<Set> {
    match e {
        Expr::Paren(p) => version_test(&p.expr),
        Expr::Binary(b) => match b.op {
            BinOp::And(_) => Some(version_test(&b.left)?.intersect(&version_test(&b.right)?)),
            BinOp::Or(_) => Some(version_test(&b.left)?.union(&version_test(&b.right)?)),
            _ if is_version(&b.left) => {
                let n = int(&b.right)?;
                Some(match b.op {
                    BinOp::Ge(_) => Set::range(n, ALL.1),
                    BinOp::Gt(_) => Set::range(n + 1, ALL.1),
                    BinOp::Le(_) => Set::range(ALL.0, n),
                    BinOp::Lt(_) => Set::range(ALL.0, n - 1),
                    BinOp::Eq(_) => Set::range(n, n),
                    BinOp::Ne(_) => Set::range(n, n).complement(),
                    _ => return None,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// The version tests among the `&&` terms of a condition that also tests other things.
fn version_terms(e: &Expr) -> Option<Set> {
    if let Some(set) = version_test(e) {
        return Some(set);
    }
    match e {
        Expr::Paren(p) => version_terms(&p.expr),
        Expr::Binary(b) if matches!(b.op, BinOp::And(_)) => match (version_terms(&b.left), version_terms(&b.right)) {
            (Some(l), Some(r)) => Some(l.intersect(&r)),
            (l, r) => l.or(r),
        },
        _ => None,
    }
}

struct Checker<'a> {
    file: &'a str,
    known: Vec<Set>,
    found: Vec<String>,
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.known.push(Set::all());
        syn::visit::visit_item_fn(self, f);
        self.known.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.known.push(Set::all());
        syn::visit::visit_impl_item_fn(self, f);
        self.known.pop();
    }

    fn visit_expr_if(&mut self, e: &'ast ExprIf) {
        let known = self.known.last().cloned().unwrap_or_else(Set::all);
        let pure = version_test(&e.cond);
        let Some(test) = pure.clone().or_else(|| version_terms(&e.cond)) else {
            return syn::visit::visit_expr_if(self, e);
        };
        let cond = quote::ToTokens::to_token_stream(&e.cond).to_string();
        if known.intersect(&test).is_empty() {
            self.found.push(format!("{}: `if {cond}` never holds where it stands (versions {:?})", self.file, known.0));
        } else if pure.is_some() && known.minus(&test).is_empty() {
            self.found
                .push(format!("{}: `if {cond}` always holds where it stands (versions {:?})", self.file, known.0));
        }
        self.visit_expr(&e.cond);
        self.known.push(known.intersect(&test));
        self.visit_block(&e.then_branch);
        self.known.pop();
        if let Some((_, otherwise)) = &e.else_branch {
            // Only a pure version test says which versions reach `else`.
            self.known.push(if pure.is_some() { known.minus(&test) } else { known });
            self.visit_expr(otherwise);
            self.known.pop();
        }
    }
}

fn dead_branches(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (name, text) in files {
        let parsed = syn::parse_file(text).unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
        let mut checker = Checker { file: name, known: Vec::new(), found: Vec::new() };
        checker.visit_file(&parsed);
        found.extend(checker.found);
    }
    found
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn generated(dir: &Path) -> Vec<(String, String)> {
    let mut config = Config::new();
    config.schema_dir(dir).json(true);
    let files = config.generate().unwrap_or_else(|e| panic!("{}: {e}", dir.display())).files;
    files.into_iter().collect()
}

#[test]
fn generated_code_has_no_version_test_its_enclosing_tests_decide() {
    let message = kwire_codegen::locate_kafka_schemas(&workspace()).expect("Kafka's schemas");
    let mut dirs = vec![message];
    dirs.extend(kwire_codegen::kafka_schema_sets(&workspace()).into_iter().map(|(_, source)| source));
    let mut files = Vec::new();
    for dir in dirs.iter().filter(|d| kwire_codegen::source::watched_path(d).exists()) {
        files.extend(generated(dir));
    }
    assert!(files.len() > 150, "only {} files generated", files.len());
    let found = dead_branches(&files);
    assert!(
        found.is_empty(),
        "{} dead branches, first ones:\n{}",
        found.len(),
        found[..found.len().min(20)].join("\n")
    );
}

/// The checker itself finds both kinds of dead test, and accepts live ones.
#[test]
fn the_checker_finds_dead_tests() {
    let dead = r#"
        fn encode(version: i16) {
            if version >= 3 {
                if version >= 2 { a(); }
                if version < 3 { b(); } else { c(); }
                if version >= 5 && x { d(); }
            } else if version >= 4 { e(); }
        }
    "#;
    let found = dead_branches(&[("dead.rs".into(), dead.into())]);
    assert_eq!(found.len(), 3, "{found:#?}");
    let live = r#"
        fn encode(version: i16) {
            if version >= 3 {
                if version >= 5 { a(); } else if version == 4 { b(); }
                if (version < 4 || version > 6) && x { c(); }
            } else if version >= 1 { d(); }
        }
    "#;
    assert_eq!(dead_branches(&[("live.rs".into(), live.into())]), Vec::<String>::new());
}
