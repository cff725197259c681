//! Bad scenario files: each problem is reported with file, line and column, and what is wrong.

mod common;

/// Runs `text` as a scenario file and returns stderr (asserting failure).
fn fails(name: &str, text: &str) -> String {
    let dir = common::temp_dir(&format!("bad-{name}"));
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = dir.join("x.pickle");
    let o = common::capture(&[
        "--scenario",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success(), "{name} should fail");
    let err = common::stderr(&o);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with(&format!("capture: {}:", file.display())),
        "{err}"
    );
    // Drop the directory part so tests assert on `name.toml:line:col: message`.
    err.trim_end().rsplit('/').next().unwrap().to_string()
}

const OK_STEP: &str = "[[step]]\nalloc = \"a\"\nsize = \"1MiB\"\n\n";

#[test]
fn unknown_key() {
    let e = fails(
        "key",
        &format!("{OK_STEP}[[step]]\nalloc = \"b\"\nsise = \"1MB\"\n"),
    );
    assert!(e.starts_with("key.toml:7:1: unknown field `sise`"), "{e}");
}

#[test]
fn toml_syntax() {
    let e = fails("syntax", "[[step]]\nalloc = \"a\nsize = 3\n");
    assert!(e.starts_with("syntax.toml:2:"), "{e}");
}

#[test]
fn negative_zero_huge_and_unit_sizes() {
    let e = fails(
        "neg",
        &format!("{OK_STEP}[[step]]\nalloc = \"b\"\nsize = \"-1GB\"\n"),
    );
    assert_eq!(e, "neg.toml:7:8: size is negative (-1000000000)");
    let e = fails("zero", "[[step]]\nalloc = \"b\"\nsize = 0\n");
    assert_eq!(e, "zero.toml:3:8: size is zero");
    let e = fails("huge", "[[step]]\nalloc = \"b\"\nsize = \"2PiB\"\n");
    assert!(
        e.starts_with("huge.toml:3:8: size 2251799813685248 bytes is more than 1 PiB"),
        "{e}"
    );
    let e = fails("unit", "[[step]]\nalloc = \"b\"\nsize = \"3 gigs\"\n");
    assert_eq!(e, "unit.toml:3:11: unexpected `gigs`");
    let e = fails("unit2", "[[step]]\nalloc = \"b\"\nsize = \"3GG\"\n");
    assert!(
        e.starts_with("unit2.toml:3:10: unknown size unit `GG`"),
        "{e}"
    );
    let e = fails("type", "[[step]]\nalloc = \"b\"\nsize = true\n");
    assert!(
        e.starts_with("type.toml:3:8: `size` must be a number or a string"),
        "{e}"
    );
}

#[test]
fn sizes_that_go_wrong_at_run_time_name_their_step() {
    let text = "[[step]]\nrepeat = 3\nvar = \"i\"\n\n[[step]]\nalloc = \"t{i}\"\nsize = \"1MB - i * 1MB\"\n\n[[step]]\nend = true\n";
    let e = fails("runtime", text);
    assert_eq!(e, "runtime.toml:5:1: alloc `t1`: size is zero");
}

#[test]
fn structure() {
    let e = fails("two", "[[step]]\nalloc = \"a\"\nfree = \"a\"\nsize = 1\n");
    assert_eq!(
        e,
        "two.toml:1:1: a step does one thing; this one has alloc and free"
    );
    let e = fails("none", "[[step]]\nsize = 1\n");
    assert!(
        e.starts_with("none.toml:1:1: a step needs one of alloc, free"),
        "{e}"
    );
    let e = fails("open", &format!("[[step]]\nrepeat = 2\n\n{OK_STEP}"));
    assert_eq!(e, "open.toml:1:1: `repeat` (line 1) has no matching `end`");
    let e = fails("close", &format!("{OK_STEP}[[step]]\nend = true\n"));
    assert_eq!(e, "close.toml:5:1: `end` without a `repeat` to close");
    let e = fails("extra", "[[step]]\nfree = \"a\"\nsize = 1\n");
    assert_eq!(e, "extra.toml:3:8: `size` does not belong on a `free` step");
    let e = fails("nosize", "[[step]]\nalloc = \"a\"\n");
    assert_eq!(e, "nosize.toml:1:1: an `alloc` step needs a `size`");
    let e = fails("empty", "[scenario]\nname = \"x\"\n");
    assert!(
        e.starts_with("empty.toml:1:1: the file has no [[step]]"),
        "{e}"
    );
}

#[test]
fn variables_and_names() {
    let e = fails("var", "[[step]]\nalloc = \"a\"\nsize = \"n * 1MB\"\n");
    assert_eq!(
        e,
        "var.toml:3:9: unknown variable `n` (none is defined here)"
    );
    let text = "[[step]]\nrepeat = 2\nvar = \"i\"\n\n[[step]]\nend = true\n\n[[step]]\nalloc = \"a{i}\"\nsize = 1\n";
    let e = fails("scope", text);
    assert_eq!(
        e,
        "scope.toml:9:12: unknown variable `i` (none is defined here)"
    );
    let text = "[[step]]\nrepeat = 2\nvar = \"i\"\n\n[[step]]\nalloc = \"fix{i}\"\nsize = \"fi * 1MB\"\n\n[[step]]\nend = true\n";
    let e = fails("word", text);
    assert_eq!(e, "word.toml:7:9: unknown variable `fi` (defined here: i)");
    let e = fails("brace", "[[step]]\nalloc = \"a{1 +}\"\nsize = 1\n");
    assert_eq!(e, "brace.toml:2:15: expression ends too early");
}

#[test]
fn tensors_used_wrongly() {
    let e = fails("free", &format!("{OK_STEP}[[step]]\nfree = \"b\"\n"));
    assert_eq!(e, "free.toml:5:1: free `b`, which is not allocated");
    let e = fails("twice", &format!("{OK_STEP}{OK_STEP}"));
    assert_eq!(
        e,
        "twice.toml:5:1: alloc `a`, which is already allocated (free it first)"
    );
}

#[test]
fn missing_file_and_unknown_builtin() {
    let o = common::capture(&["--scenario", "no-such-scenario", "-o", "/tmp/never.pickle"]);
    assert!(!o.status.success());
    let e = common::stderr(&o);
    assert!(
        e.starts_with("capture: no-such-scenario: no such file, and not a built-in scenario (built-ins: churn, "),
        "{e}"
    );
}
