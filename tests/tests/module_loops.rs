//! No loop of module imports in any crate of the workspace: data flows one way inside each
//! crate as between them (DESIGN: views → state → client → protocol; worker → viewmodel →
//! core). The graph is read from the source (`memsnap_tests::module_graph`: `use` lines,
//! re-exports and paths in code, test modules left out); a loop fails with every edge inside
//! it and the line that makes it. The checker's own rules are tested on small sources first.

use std::path::{Path, PathBuf};

use memsnap_tests::module_graph::{graph, loops, name, read_crate, Module};

fn m(s: &str) -> Module {
    if s.is_empty() {
        Vec::new()
    } else {
        s.split("::").map(str::to_string).collect()
    }
}

fn src(files: &[(&str, &str)]) -> Vec<(Module, PathBuf, String)> {
    files
        .iter()
        .map(|(module, text)| (m(module), PathBuf::from(module), text.to_string()))
        .collect()
}

fn loop_names(files: &[(&str, &str)]) -> Vec<Vec<String>> {
    loops(&graph(src(files)))
        .into_iter()
        .map(|l| l.iter().map(|x| name(x)).collect())
        .collect()
}

#[test]
fn the_checker_finds_loops_through_uses_paths_and_reexports() {
    // Two files importing each other.
    assert_eq!(
        loop_names(&[
            ("", "mod a; mod b;"),
            ("a", "use crate::b::B; pub struct A;"),
            ("b", "use super::a::A; pub struct B;"),
        ]),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
    // A path in code, and a brace tree.
    assert_eq!(
        loop_names(&[
            ("", "mod a; mod b;"),
            ("a", "fn f() { crate::b::g() }"),
            ("b", "use crate::{x::Y, a::{self, A}};"),
        ])
        .len(),
        1
    );
    // A folder whose parent uses a child that uses the parent's own item.
    assert_eq!(
        loop_names(&[
            ("", "mod f;"),
            ("f", "mod c; pub struct T; fn g() { c::h() }"),
            ("f::c", "use super::T; pub fn h() {}"),
        ]),
        vec![vec!["f".to_string(), "f::c".to_string()]]
    );
    // Through a facade's re-export: a → f (re-exports f::c) → f::c → a.
    assert_eq!(
        loop_names(&[
            ("", "mod a; mod f;"),
            ("a", "use crate::f::C; pub fn x() {}"),
            ("f", "mod c; pub use c::C;"),
            ("f::c", "pub struct C; fn y() { crate::a::x() }"),
        ])
        .len(),
        1
    );
    // `as` renames the import, not the module.
    assert_eq!(
        loop_names(&[
            ("", "mod a; mod b;"),
            ("a", "use crate::b as other;"),
            ("b", "use super::a::{A as Z};"),
        ])
        .len(),
        1
    );
}

#[test]
fn the_checker_ignores_comments_strings_tests_and_one_way_folders() {
    assert!(loop_names(&[
        ("", "mod a; mod b;"),
        // A comment, a doc comment, a string, a raw string and a char naming the other module.
        (
            "a",
            "// crate::b::x\n/// crate::b::y\n/* crate::b::z */ const S: &str = \"crate::b::w\"; \
             const R: &str = r#\"crate::b::v\"#; const C: char = '\"'; fn f<'a>(x: &'a u8) {}"
        ),
        ("b", "use crate::a::f;"),
    ])
    .is_empty());
    // A test module depends on what it tests.
    assert!(loop_names(&[
        ("", "mod a; mod b;"),
        (
            "a",
            "pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::b::g; }"
        ),
        ("b", "use crate::a::f; pub fn g() {}"),
    ])
    .is_empty());
    // A facade that only declares and re-exports, with children that use siblings.
    assert!(loop_names(&[
        ("", "mod f;"),
        ("f", "mod c; mod d; pub use c::C; pub use d::D;"),
        ("f::c", "pub struct C;"),
        ("f::d", "use super::c::C; pub struct D(C);"),
    ])
    .is_empty());
}

#[test]
fn no_crate_has_a_loop_of_module_imports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut report = String::new();
    let mut crates = 0;
    for krate in ["core", "app", "capture", "tests", "python"] {
        let dir = root.join(krate).join("src");
        if !dir.is_dir() {
            continue;
        }
        crates += 1;
        let g = read_crate(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert!(
            g.modules.len() > 1 || krate == "python",
            "{krate}: no modules read"
        );
        for l in loops(&g) {
            report.push_str(&format!(
                "{krate}: a loop of {} modules: {}\n",
                l.len(),
                l.iter().map(|x| name(x)).collect::<Vec<_>>().join(", ")
            ));
            for from in &l {
                for (to, e) in &g.edges[from] {
                    if l.contains(to) {
                        report.push_str(&format!(
                            "    {} -> {}   ({}:{})\n",
                            name(from),
                            name(to),
                            e.file.strip_prefix(&root).unwrap_or(&e.file).display(),
                            e.line
                        ));
                    }
                }
            }
        }
    }
    assert!(
        crates >= 4,
        "the workspace's crates were not found under {}",
        root.display()
    );
    assert!(
        report.is_empty(),
        "module imports must run one way:\n{report}"
    );
}
