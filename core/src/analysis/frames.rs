//! Frame classification and formatting: which frames are noise (MemoryViz.js's omit lists),
//! which are torch internals or the Python standard library, and which is the user's own line.

use crate::snapshot::{Frame, FrameId, StackId, Stacks};

/// Symbol names MemoryViz.js hides (capture machinery and interpreter entry points).
const OMIT_NAMES: &[&str] = &[
    "unwind::unwind",
    "CapturedTraceback::gather",
    "gather_with_cpp",
    "_start",
    "__libc_start_main",
    "PyEval_",
    "PyObject_",
    "PyFunction_",
];

/// File names MemoryViz.js hides (dispatcher glue and CPython's evaluation loop).
const OMIT_FILES: &[&str] = &[
    "core/boxing",
    "/Register",
    "/Redispatch",
    "pythonrun.c",
    "Modules/main.c",
    "Objects/call.c",
    "Objects/methodobject.c",
    "pycore_ceval.h",
    "ceval.c",
    "cpython/abstract.h",
];

/// Where a frame comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FrameKind {
    /// Python code outside torch, the standard library and installed packages.
    User,
    /// Python code of an installed package other than torch (transformers, einops, ...).
    Library,
    /// Python code of the torch package.
    Torch,
    /// Python standard library (`lib/python3.X/`, `<frozen ...>`).
    Stdlib,
    /// C, C++ or CUDA code (torch, CPython or libc), or an unsymbolized frame.
    Native,
}

/// Paths compared with forward slashes, so Windows paths classify the same.
fn norm(path: &str) -> std::borrow::Cow<'_, str> {
    if path.contains('\\') {
        path.replace('\\', "/").into()
    } else {
        path.into()
    }
}

/// True for frames MemoryViz.js drops from stacks it prints.
pub fn is_omitted(frame: &Frame) -> bool {
    name_is_omitted(&frame.name) || file_is_omitted(&norm(&frame.filename))
}

fn name_is_omitted(name: &str) -> bool {
    OMIT_NAMES.iter().any(|n| name.contains(n))
}

/// `file` as `norm` made it.
fn file_is_omitted(file: &str) -> bool {
    OMIT_FILES.iter().any(|f| file.contains(f))
}

fn is_python_file(file: &str) -> bool {
    file.ends_with(".py") || file.starts_with('<')
}

fn in_packages(file: &str) -> Option<&str> {
    ["site-packages/", "dist-packages/"]
        .iter()
        .find_map(|m| file.find(m).map(|i| &file[i + m.len()..]))
}

/// A path component `pythonX.Y` or `pythonXY` followed by more path (the standard library).
fn in_stdlib(file: &str) -> bool {
    if file.starts_with("<frozen ") {
        return true;
    }
    let lower = file.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("/python3") {
        let after = &rest[i + "/python3".len()..];
        let digits = after.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if digits.starts_with('/') && digits.len() > 1 {
            return true;
        }
        rest = after;
    }
    // Windows installs: `...\Python311\Lib\os.py` (packages were handled before this).
    lower
        .split('/')
        .collect::<Vec<_>>()
        .windows(3)
        .any(|w| w[0].starts_with("python") && w[1] == "lib" && !w[2].is_empty())
}

pub fn kind(frame: &Frame) -> FrameKind {
    file_kind(&norm(&frame.filename))
}

/// A frame's kind depends on its file name only (`file` as `norm` made it).
fn file_kind(file: &str) -> FrameKind {
    // `capture`'s scenario files: each step's frame is a line of the program it stands for
    // (the bundled example's flame graph showed only hidden frames when these were native).
    if file.ends_with(".toml") {
        return FrameKind::User;
    }
    if !is_python_file(file) {
        return FrameKind::Native;
    }
    if let Some(pkg) = in_packages(file) {
        return if pkg.starts_with("torch/") {
            FrameKind::Torch
        } else {
            FrameKind::Library
        };
    }
    if file.starts_with("torch/") || file.contains("/pytorch/torch/") {
        return FrameKind::Torch;
    }
    if in_stdlib(file) {
        return FrameKind::Stdlib;
    }
    FrameKind::User
}

/// The kinds in `repr(u8)` order, to read a class byte back.
const KINDS: [FrameKind; 5] = [
    FrameKind::User,
    FrameKind::Library,
    FrameKind::Torch,
    FrameKind::Stdlib,
    FrameKind::Native,
];
/// The class byte's bit for an omitted frame; the low bits are the kind.
const OMITTED: u8 = 0x80;

/// Every frame's class byte, computed once per frame table (`Stacks::frame_classes`). A
/// reader's frames share their strings (`Arc<str>`s interned by content), and a few thousand
/// frames name a few hundred files: each distinct file and name is classified once, by
/// address (strings not shared are classified once per copy, to the same result).
fn classes(stacks: &Stacks) -> &[u8] {
    use std::collections::HashMap;
    stacks.frame_classes(|frames| {
        let mut files: HashMap<*const u8, u8> = HashMap::new();
        let mut names: HashMap<*const u8, bool> = HashMap::new();
        frames
            .iter()
            .map(|f| {
                let file = *files.entry(f.filename.as_ptr()).or_insert_with(|| {
                    let file = norm(&f.filename);
                    file_kind(&file) as u8 | if file_is_omitted(&file) { OMITTED } else { 0 }
                });
                let name = *names
                    .entry(f.name.as_ptr())
                    .or_insert_with(|| name_is_omitted(&f.name));
                file | if name { OMITTED } else { 0 }
            })
            .collect()
    })
}

/// `kind` of an interned frame, classified once per frame table.
pub fn kind_of(stacks: &Stacks, id: FrameId) -> FrameKind {
    KINDS[(classes(stacks)[id.0 as usize] & !OMITTED) as usize]
}

/// `is_omitted` of an interned frame, classified once per frame table.
pub fn is_omitted_id(stacks: &Stacks, id: FrameId) -> bool {
    classes(stacks)[id.0 as usize] & OMITTED != 0
}

/// `is_hidden` of an interned frame, classified once per frame table.
pub fn is_hidden_id(stacks: &Stacks, id: FrameId) -> bool {
    is_omitted_id(stacks, id) || is_internal_kind(kind_of(stacks, id))
}

/// Whether a frame is internal (torch, stdlib or native) rather than user or library code.
pub fn is_internal(frame: &Frame) -> bool {
    is_internal_kind(kind(frame))
}

fn is_internal_kind(kind: FrameKind) -> bool {
    matches!(
        kind,
        FrameKind::Torch | FrameKind::Stdlib | FrameKind::Native
    )
}

/// Frames a flame graph leaves out unless all frames are asked for: internals (torch, the
/// standard library, native code) and the capture machinery MemoryViz.js omits.
pub fn is_hidden(frame: &Frame) -> bool {
    is_internal(frame) || is_omitted(frame)
}

/// The innermost user frame of a stack; when the stack has none, the innermost library frame
/// (code the user called into that is still not torch). Index into the stack's frame list.
pub fn top_user_frame(stacks: &Stacks, stack: StackId) -> Option<usize> {
    let frames = stacks.stack(stack);
    let kind_at = |i: usize| kind_of(stacks, frames[i]);
    (0..frames.len())
        .find(|&i| kind_at(i) == FrameKind::User)
        .or_else(|| (0..frames.len()).find(|&i| kind_at(i) == FrameKind::Library))
}

/// Native frames of the allocation path itself, the same in every stack: a label skips them to
/// name the operator that allocated.
const ALLOCATION_PATH: &[&str] = &["c10::", "at::detail::", "empty", "Allocator", "TensorBase"];

/// `file:line:name` of the innermost user (or library) frame; without one, the innermost
/// Python frame (torch's), then the innermost native frame past the allocation path, then the
/// innermost frame the capture machinery did not add. The one-line name rows show for a stack.
pub fn label(stacks: &Stacks, stack: Option<StackId>) -> String {
    let Some(s) = stack.filter(|s| (s.0 as usize) < stacks.stack_count()) else {
        return "<no stack>".into();
    };
    if let Some(k) = top_user_frame(stacks, s) {
        return format(stacks.frame(stacks.stack(s)[k]));
    }
    let visible = || {
        stacks
            .stack(s)
            .iter()
            .filter(|&&f| !is_omitted_id(stacks, f))
    };
    visible()
        .find(|&&f| kind_of(stacks, f) != FrameKind::Native)
        .or_else(|| {
            visible().find(|&&f| {
                let name = &stacks.frame(f).name;
                !ALLOCATION_PATH.iter().any(|p| name.contains(p))
            })
        })
        .or_else(|| visible().next())
        .map(|&f| format!("{} (no user frame)", format(stacks.frame(f))))
        .unwrap_or_else(|| "<empty stack>".into())
}

/// `file:line:name`, as MemoryViz.js prints a frame.
pub fn format(frame: &Frame) -> String {
    format!("{}:{}:{}", frame.filename, frame.line, frame.name)
}

/// The stack's frames, innermost first, without omitted frames when `filter` is set.
pub fn visible_frames(stacks: &Stacks, stack: StackId, filter: bool) -> Vec<&Frame> {
    stacks
        .stack(stack)
        .iter()
        .filter(|&&f| !filter || !is_omitted_id(stacks, f))
        .map(|&f| stacks.frame(f))
        .collect()
}

/// One line per frame, innermost first; three or more equal consecutive lines collapse to one
/// plus `<repeats N times>` like MemoryViz.js.
pub fn format_stack(stacks: &Stacks, stack: StackId, filter: bool) -> Vec<String> {
    let lines: Vec<String> = visible_frames(stacks, stack, filter)
        .into_iter()
        .map(format)
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j < lines.len() && lines[j] == lines[i] {
            j += 1;
        }
        let run = j - i;
        if run >= 3 {
            out.push(lines[i].clone());
            out.push(format!("<repeats {} times>", run - 1));
        } else {
            out.extend(lines[i..j].iter().cloned());
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn fr(file: &str, line: i64, name: &str) -> Frame {
        Frame {
            filename: Arc::from(file),
            line,
            name: Arc::from(name),
            extra: Vec::new(),
        }
    }

    #[test]
    fn kinds() {
        assert_eq!(
            kind(&fr("capture/scenarios/oom.toml", 12, "forward")),
            FrameKind::User,
            "a scenario step is the program's own line"
        );
        assert_eq!(
            kind(&fr("??", 0, "torch::unwind::unwind()")),
            FrameKind::Native
        );
        assert_eq!(kind(&fr("", 0, "c10::foo")), FrameKind::Native);
        assert_eq!(kind(&fr("RegisterCUDA.cpp", 0, "x")), FrameKind::Native);
        assert_eq!(
            kind(&fr(
                "/x/lib/python3.12/site-packages/torch/nn/modules/module.py",
                1,
                "f"
            )),
            FrameKind::Torch
        );
        assert_eq!(
            kind(&fr(
                r"D:\Dev\.venv\Lib\site-packages\torch\nn\modules\module.py",
                1,
                "f"
            )),
            FrameKind::Torch
        );
        assert_eq!(
            kind(&fr(
                r"D:\Dev\.venv\Lib\site-packages\einops\einops.py",
                1,
                "f"
            )),
            FrameKind::Library
        );
        assert_eq!(
            kind(&fr("/opt/env/lib/python3.10/runpy.py", 1, "f")),
            FrameKind::Stdlib
        );
        assert_eq!(
            kind(&fr("<frozen runpy>", 88, "_run_code")),
            FrameKind::Stdlib
        );
        assert_eq!(
            kind(&fr("/root/proj/model.py", 3, "forward")),
            FrameKind::User
        );
        assert_eq!(
            kind(&fr(r"D:\Dev\proj\model.py", 3, "forward")),
            FrameKind::User
        );
        assert_eq!(
            kind(&fr(r"C:\Python311\Lib\runpy.py", 3, "f")),
            FrameKind::Stdlib
        );
        assert_eq!(kind(&fr(r"D:\proj\lib\model.py", 3, "f")), FrameKind::User);
    }

    #[test]
    fn omitted() {
        assert!(is_omitted(&fr(
            "??",
            0,
            "torch::CapturedTraceback::gather(bool)"
        )));
        assert!(is_omitted(&fr("/src/Objects/call.c", 0, "x")));
        assert!(is_omitted(&fr("/a/RegisterCUDA.cpp", 0, "x")));
        assert!(!is_omitted(&fr("/root/proj/model.py", 3, "forward")));
    }

    #[test]
    fn top_user_and_format() {
        let mut s = Stacks::new();
        let a = s.push_frame(fr("??", 0, "c10::malloc"));
        let b = s.push_frame(fr("/e/site-packages/torch/nn/functional.py", 9, "linear"));
        let c = s.push_frame(fr("/e/site-packages/einops/einops.py", 5, "rearrange"));
        let d = s.push_frame(fr("/root/proj/model.py", 42, "forward"));
        let full = s.push_stack(vec![a, b, c, d].into());
        let lib_only = s.push_stack(vec![a, b, c].into());
        let none = s.push_stack(vec![a, b].into());
        assert_eq!(top_user_frame(&s, full), Some(3));
        assert_eq!(top_user_frame(&s, lib_only), Some(2));
        assert_eq!(top_user_frame(&s, none), None);
        assert_eq!(format(s.frame(d)), "/root/proj/model.py:42:forward");
        let rep = s.push_stack(vec![d, d, d, d, a].into());
        assert_eq!(
            format_stack(&s, rep, false),
            vec![
                "/root/proj/model.py:42:forward".to_string(),
                "<repeats 3 times>".to_string(),
                "??:0:c10::malloc".to_string()
            ]
        );
        assert_eq!(format_stack(&s, full, true).len(), 4);
    }

    #[test]
    fn interned_classes_equal_the_frames_own_and_follow_new_frames() {
        let mut s = Stacks::new();
        let frames = [
            fr("/root/proj/model.py", 3, "forward"),
            fr(
                "/opt/env/lib/python3.10/site-packages/torch/nn/modules/module.py",
                1,
                "_call",
            ),
            fr(
                "/opt/env/lib/python3.10/site-packages/einops/einops.py",
                1,
                "rearrange",
            ),
            fr("<frozen runpy>", 88, "_run_code"),
            fr("??", 0, "torch::unwind::unwind()"),
            fr("/src/Objects/call.c", 0, "x"),
        ];
        let ids: Vec<FrameId> = frames.iter().cloned().map(|f| s.push_frame(f)).collect();
        for (f, &id) in frames.iter().zip(&ids) {
            assert_eq!(kind_of(&s, id), kind(f), "{f:?}");
            assert_eq!(is_omitted_id(&s, id), is_omitted(f), "{f:?}");
            assert_eq!(is_hidden_id(&s, id), is_hidden(f), "{f:?}");
        }
        assert_eq!(
            ids.iter()
                .map(|&id| is_hidden_id(&s, id))
                .collect::<Vec<_>>(),
            [false, true, false, true, true, true],
            "user and library code shown, torch, stdlib and native hidden"
        );
        // A frame added after the table was classified is classified too.
        let late = fr("/usr/lib/python3.11/json/__init__.py", 1, "dumps");
        let id = s.push_frame(late.clone());
        assert_eq!(kind_of(&s, id), FrameKind::Stdlib);
        assert_eq!(kind_of(&s, ids[0]), FrameKind::User);
    }
}
