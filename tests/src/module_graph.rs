//! The module graph of a crate, read from its source: which module's code names which other
//! module (`use` lines, re-exports and paths in the code), so that a test can fail on a loop.
//!
//! A module is a file (`a/b.rs` or `a/b/mod.rs` is `a::b`; `lib.rs`/`main.rs` the root). An
//! edge A → B is a path in A's code (outside `#[cfg(test)]` modules, whose code depends on what
//! it tests) that names B or an item in B: the longest prefix of the path that is a module
//! file. `mod b;` itself is not an edge; `pub use b::X` is (a facade depends on what it shows).
//! Inline modules other than test modules count as their file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub type Module = Vec<String>;

/// One edge with the first place that makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: Module,
    pub to: Module,
    pub file: PathBuf,
    pub line: usize,
}

#[derive(Debug, Default)]
pub struct Graph {
    pub modules: BTreeMap<Module, PathBuf>,
    pub edges: BTreeMap<Module, BTreeMap<Module, Edge>>,
}

pub fn name(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// Reads the `.rs` files under `src`.
pub fn read_crate(src: &Path) -> std::io::Result<Graph> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    let mut sources = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).expect("under src");
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let last = parts.pop().unwrap_or_default();
        let stem = last.trim_end_matches(".rs").to_string();
        // Binaries under src/bin/ are crates of their own.
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
            parts.push(stem);
        }
        let text = std::fs::read_to_string(&f)?;
        sources.push((parts, f, text));
    }
    Ok(graph(sources))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// The graph of modules given as (module path, file, source text).
pub fn graph(sources: Vec<(Module, PathBuf, String)>) -> Graph {
    let mut g = Graph::default();
    for (m, f, _) in &sources {
        g.modules.insert(m.clone(), f.clone());
    }
    for (m, f, text) in &sources {
        let code = drop_test_modules(&blank_comments_and_literals(text));
        let mut out: BTreeMap<Module, Edge> = BTreeMap::new();
        for (path, at) in paths(&code, m, &g.modules) {
            let Some(to) = resolve(&path, m, &g.modules) else {
                continue;
            };
            if &to == m {
                continue;
            }
            let line = code[..at].matches('\n').count() + 1;
            out.entry(to.clone()).or_insert(Edge {
                from: m.clone(),
                to,
                file: f.clone(),
                line,
            });
        }
        g.edges.insert(m.clone(), out);
    }
    g
}

/// The module a path names: its longest prefix that is a module.
fn resolve(path: &[String], from: &Module, modules: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let (mut cur, rest): (Module, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") | Some("super") => {
            let mut base = from.clone();
            let mut i = 0;
            while let Some(s) = path.get(i) {
                match s.as_str() {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                i += 1;
            }
            (base, &path[i..])
        }
        Some(first) => {
            let mut child = from.clone();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
            (from.clone(), path)
        }
        None => return None,
    };
    let mut best = modules.contains_key(&cur).then(|| cur.clone());
    for s in rest {
        cur.push(s.clone());
        if modules.contains_key(&cur) {
            best = Some(cur.clone());
        } else {
            break;
        }
    }
    best
}

/// Every module path in `code` with its byte offset: each `use` tree expanded, then paths
/// starting `crate::`, `self::`, `super::` or a child module's name.
fn paths(code: &str, m: &Module, modules: &BTreeMap<Module, PathBuf>) -> Vec<(Vec<String>, usize)> {
    let mut out = Vec::new();
    // `use` trees first; then blanked, so that their paths are not read twice.
    let mut rest: Vec<u8> = code.as_bytes().to_vec();
    let mut i = 0;
    while i < code.len() {
        if code.is_char_boundary(i) && starts_word(code, i, "use") {
            if let Some(end) = code[i..].find(';') {
                let tree = code[i + 3..i + end].replace(" as ", "@");
                let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
                for p in expand(&tree) {
                    let segs = p
                        .split("::")
                        .map(|s| s.split('@').next().unwrap_or(s).to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                    out.push((segs, i));
                }
                for b in &mut rest[i..i + end + 1] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i += end + 1;
                continue;
            }
        }
        i += 1;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < rest.len() {
        let starts = (rest[i].is_ascii_alphabetic() || rest[i] == b'_')
            && (i == 0 || !(word(rest[i - 1]) || rest[i - 1] == b':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut segs = Vec::new();
        loop {
            let s = j;
            while j < rest.len() && word(rest[j]) {
                j += 1;
            }
            segs.push(String::from_utf8_lossy(&rest[s..j]).into_owned());
            if rest[j..].starts_with(b"::")
                && rest
                    .get(j + 2)
                    .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
            {
                j += 2;
            } else {
                break;
            }
        }
        if segs.len() > 1 {
            let first = segs[0].as_str();
            let mut child = m.clone();
            child.push(first.to_string());
            if matches!(first, "crate" | "self" | "super") || modules.contains_key(&child) {
                out.push((segs, i));
            }
        }
        i = j.max(i + 1);
    }
    out
}

fn starts_word(code: &str, i: usize, w: &str) -> bool {
    let b = code.as_bytes();
    code[i..].starts_with(w)
        && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        && b.get(i + w.len())
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b'{')
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let mut depth = 0;
    let mut close = tree.len();
    for (k, ch) in tree[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = open + k;
                    break;
                }
            }
            _ => {}
        }
    }
    let (pre, inner) = (&tree[..open], &tree[(open + 1).min(close)..close]);
    let post = tree.get(close + 1..).unwrap_or("");
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for ch in inner.chars() {
        match ch {
            ',' if depth == 0 => parts.push(std::mem::take(&mut cur)),
            '{' => {
                depth += 1;
                cur.push(ch)
            }
            '}' => {
                depth -= 1;
                cur.push(ch)
            }
            _ => cur.push(ch),
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            if p == "self" {
                expand(&format!("{}{post}", pre.trim_end_matches("::")))
            } else {
                expand(&format!("{pre}{p}{post}"))
            }
        })
        .collect()
}

/// Comments, strings and char literals blanked (newlines kept), so that no path inside one
/// counts.
pub fn blank_comments_and_literals(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    blank(&mut out, b[i]);
                    blank(&mut out, b[i + 1]);
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    blank(&mut out, b[i]);
                    blank(&mut out, b[i + 1]);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // Raw string r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &b[i..j.min(b.len())] {
                blank(&mut out, ch);
            }
            i = j;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                blank(&mut out, b[i]);
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), else a lifetime.
            let lit_end = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match lit_end {
                Some(e) => {
                    for &ch in &b[i..=e] {
                        blank(&mut out, ch);
                    }
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `#[cfg(test)] mod name { … }` blocks blanked (newlines kept).
fn drop_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let body = trimmed
            .strip_prefix("pub(crate) ")
            .or_else(|| trimmed.strip_prefix("pub "))
            .unwrap_or(trimmed);
        let is_inline_mod = body.starts_with("mod ")
            && body
                .find(['{', ';'])
                .is_some_and(|k| body.as_bytes()[k] == b'{');
        if !is_inline_mod {
            out.push_str(&rest[..at + "#[cfg(test)]".len()]);
            rest = after;
            continue;
        }
        let open = at + "#[cfg(test)]".len() + (after.len() - body.len()) + body.find('{').unwrap();
        let mut depth = 0;
        let mut end = rest.len();
        for (k, ch) in rest[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push_str(&rest[..at]);
        out.extend(
            rest[at..end]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The loops: strongly connected sets of more than one module (Tarjan's algorithm).
pub fn loops(g: &Graph) -> Vec<Vec<Module>> {
    struct T<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a Module) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(es) = t.g.edges.get(v) {
            for w in es.keys() {
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.modules.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}
