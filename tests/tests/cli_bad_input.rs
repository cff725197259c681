//! Bad input: one clear line on stderr naming the file and what is wrong, exit 1, no panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use memsnap_tests::{fixtures, memsnap_bin};

/// Writes `bytes` to a scratch file and runs `memsnap stats` on it.
fn stats_of(dir: &Path, name: &str, bytes: &[u8]) -> (PathBuf, Output) {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write input");
    let out = memsnap_bin::run(&["stats", path.to_str().expect("path")], None);
    (path, out)
}

/// The single stderr line, after checking exit code 1 and the `memsnap: <file>: ` prefix.
fn error_line(path: &Path, out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "exit code; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    let prefix = format!("memsnap: {}: ", path.display());
    assert!(
        stderr.starts_with(&prefix),
        "prefix {prefix:?} in {stderr:?}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout");
    stderr[prefix.len()..].trim_end().to_owned()
}

/// A small valid snapshot made by CPython when available (else the first real fixture).
fn small_valid_pickle() -> Vec<u8> {
    let script = "import pickle,sys\n\
        fr=[{'filename':'a.py','line':1,'name':'f'}]\n\
        b={'address':4096,'size':512,'requested_size':500,'state':'active_allocated','frames':fr}\n\
        s={'device':0,'address':4096,'total_size':2097152,'stream':0,'segment_type':'small','blocks':[b]}\n\
        t=[{'action':'alloc','addr':4096,'size':500,'stream':0,'frames':fr}]\n\
        sys.stdout.buffer.write(pickle.dumps({'segments':[s],'device_traces':[t]},protocol=4))";
    python_bytes(script)
}

fn python_bytes(script: &str) -> Vec<u8> {
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn truncated_files_say_truncated() {
    let dir = fixtures::scratch("truncated");
    let mut inputs = vec![("small", small_valid_pickle())];
    if let Some(files) = fixtures::real_fixtures() {
        inputs.push(("real", std::fs::read(&files[0]).expect("read")));
    }
    for (label, full) in inputs {
        let n = full.len();
        for cut in [1, 2, 11, 12, n / 3, n / 2, n - 2, n - 1] {
            let (path, out) = stats_of(&dir, &format!("{label}-cut-{cut}.pickle"), &full[..cut]);
            let msg = error_line(&path, &out);
            assert!(msg.starts_with("at byte "), "{label} cut {cut}: {msg}");
            assert!(msg.contains("truncated"), "{label} cut {cut}: {msg}");
        }
    }
}

#[test]
fn empty_file() {
    let dir = fixtures::scratch("empty");
    let (path, out) = stats_of(&dir, "empty.pickle", b"");
    assert_eq!(error_line(&path, &out), "empty input: not a pickle");
}

#[test]
fn a_plain_list_of_ints_is_not_a_snapshot() {
    let dir = fixtures::scratch("ints");
    // pickle.dumps([1, 2, 3], protocol=2), written out by hand.
    let bytes = b"\x80\x02]q\x00(K\x01K\x02K\x03e.";
    let (path, out) = stats_of(&dir, "ints.pickle", bytes);
    let msg = error_line(&path, &out);
    assert!(
        msg.contains("list of segments") && msg.contains("[0]: expected dict, got int"),
        "{msg}"
    );
}

#[test]
fn code_is_refused_not_run() {
    let dir = fixtures::scratch("global");
    // `os.system('touch <marker>')` as pickle would REDUCE it; the marker must not appear.
    let marker = dir.join("ran");
    let cmd = format!("touch {}", marker.display());
    let mut bytes = b"\x80\x02cos\nsystem\nX".to_vec();
    bytes.extend_from_slice(&(cmd.len() as u32).to_le_bytes());
    bytes.extend_from_slice(cmd.as_bytes());
    bytes.extend_from_slice(b"\x85R.");
    let (path, out) = stats_of(&dir, "evil.pickle", &bytes);
    assert_eq!(
        error_line(&path, &out),
        "at byte 2: opcode GLOBAL (0x63) 'os system' refused: memsnap reads plain data only; \
         this pickle asks to import/call code"
    );
    assert!(!marker.exists());
    // The same with STACK_GLOBAL (protocol 4 style) names that opcode.
    let (path, out) = stats_of(
        &dir,
        "evil4.pickle",
        b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02ls\x85R.",
    );
    let msg = error_line(&path, &out);
    assert!(
        msg.starts_with("at byte 14: opcode STACK_GLOBAL (0x93) refused"),
        "{msg}"
    );
}

#[test]
fn gzip_inputs() {
    let dir = fixtures::scratch("gzip");
    let (path, out) = stats_of(&dir, "zero.gz", b"");
    assert_eq!(error_line(&path, &out), "empty input: not a pickle");
    // gzip of nothing: a valid header and trailer around an empty stream.
    let empty_gz = python_bytes("import gzip,sys; sys.stdout.buffer.write(gzip.compress(b''))");
    let (path, out) = stats_of(&dir, "empty.gz", &empty_gz);
    assert_eq!(
        error_line(&path, &out),
        "gzip data inflates to nothing: not a pickle"
    );
    let small = small_valid_pickle();
    let gz = python_bytes(&format!(
        "import gzip,sys; sys.stdout.buffer.write(gzip.compress(bytes({:?})))",
        small
    ));
    let (path, out) = stats_of(&dir, "cut.gz", &gz[..gz.len() / 2]);
    let msg = error_line(&path, &out);
    assert!(msg.contains("gzip data is corrupt or truncated"), "{msg}");
    // And a whole one reads like the plain pickle.
    let (_, out) = stats_of(&dir, "whole.gz", &gz);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn random_bytes() {
    let dir = fixtures::scratch("random");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..20 {
        let mut bytes = Vec::with_capacity(4096);
        for _ in 0..4096 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.push(state as u8);
        }
        if round % 2 == 1 {
            // Start like a real pickle so the machine gets further in.
            bytes[..2].copy_from_slice(&[0x80, 4]);
        }
        if bytes[..2] == [0x1f, 0x8b] {
            bytes[0] = 0;
        }
        let (path, out) = stats_of(&dir, &format!("random-{round}.bin"), &bytes);
        let msg = error_line(&path, &out);
        assert!(msg.starts_with("at byte "), "round {round}: {msg}");
    }
}

#[test]
fn a_block_size_that_is_a_string() {
    let dir = fixtures::scratch("badtype");
    let bytes = python_bytes(
        "import pickle,sys\n\
         b={'address':0,'size':'512','state':'inactive'}\n\
         s={'device':0,'address':0,'total_size':512,'blocks':[{'size':512,'state':'inactive'},b]}\n\
         sys.stdout.buffer.write(pickle.dumps({'segments':[s]},protocol=4))",
    );
    let (path, out) = stats_of(&dir, "badtype.pickle", &bytes);
    let msg = error_line(&path, &out);
    assert!(
        msg.ends_with("segments[0].blocks[1].size: expected int, got str"),
        "{msg}"
    );
}

#[test]
fn a_2gb_length_prefix_on_a_short_file() {
    let dir = fixtures::scratch("bigprefix");
    let mut bytes = b"\x80\x04X".to_vec();
    bytes.extend_from_slice(&0x8000_0000u32.to_le_bytes());
    bytes.extend_from_slice(b"abc.");
    let (path, out) = stats_of(&dir, "big.pickle", &bytes);
    assert_eq!(
        error_line(&path, &out),
        "at byte 2: opcode BINUNICODE (0x58): length prefix says 2147483648 bytes follow but \
         only 4 remain (file truncated or corrupt)"
    );
}

#[test]
fn missing_file_and_usage_errors() {
    let out = memsnap_bin::run(&["stats", "/nonexistent/x.pickle"], None);
    let msg = error_line(Path::new("/nonexistent/x.pickle"), &out);
    assert!(msg.contains("No such file"), "{msg}");
    let out = memsnap_bin::run(&["stats"], None);
    assert_eq!(out.status.code(), Some(2), "clap usage error");
    let out = memsnap_bin::run(&["frobnicate", "x"], None);
    assert_eq!(out.status.code(), Some(2), "unknown subcommand");
}

/// `stats` reads without frames; a trace entry's frame list that the file refers to again
/// outside the entry (a memo reference, which CPython writes for a list it meets twice) makes
/// that read refuse it, and `stats` then reads the file in full: the same figures as the file
/// without the second reference, no message.
#[test]
fn a_frame_list_shared_outside_its_entry_still_gets_stats() {
    let dir = fixtures::scratch("shared-frame-list");
    let script = |again: &str| {
        format!(
            "import pickle,sys\n\
             fr=[{{'filename':'a.py','line':1,'name':'f'}}]\n\
             b={{'address':4096,'size':512,'requested_size':500,'state':'active_allocated'}}\n\
             free={{'address':4608,'size':2096640,'requested_size':0,'state':'inactive'}}\n\
             s={{'device':0,'address':4096,'total_size':2097152,'stream':0,'blocks':[b,free]}}\n\
             t=[{{'action':'alloc','addr':4096,'size':500,'stream':0,'frames':fr}}]\n\
             d={{'segments':[s],'device_traces':[t]{again}}}\n\
             sys.stdout.buffer.write(pickle.dumps(d,protocol=4))"
        )
    };
    let plain = dir.join("plain.pickle");
    std::fs::write(&plain, python_bytes(&script(""))).expect("write");
    let shared = dir.join("shared.pickle");
    std::fs::write(&shared, python_bytes(&script(",'again':fr"))).expect("write");
    let out = memsnap_bin::run(&["stats", "--json", shared.to_str().expect("path")], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    let expected = memsnap_bin::stdout(&["stats", "--json", plain.to_str().expect("path")]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    assert!(expected.contains("\"trace_entries\":[1]"), "{expected}");
}
