//! One snapshot given to `memsnap` every way a shell can give it: a regular file (which the CLI
//! maps), stdin, a named pipe and a gzipped file (which it reads). Each must print the same
//! summary, and an empty regular file (which cannot be mapped) must get the reader's error.

use std::path::Path;
use std::process::Command;

use memsnap_tests::{fixtures, memsnap_bin};

fn stats(path: &str, stdin: Option<&[u8]>) -> String {
    memsnap_bin::stdout_with(&["stats", "--json", path], stdin)
}

#[test]
fn a_file_stdin_a_pipe_and_gzip_give_the_same_summary() {
    let example = fixtures::workspace_root().join("app/assets/example.pickle");
    let bytes = std::fs::read(&example).expect("read the bundled example");
    let from_file = stats(example.to_str().expect("path"), None);
    assert!(from_file.contains("\"trace_entries\""), "{from_file}");

    assert_eq!(stats("-", Some(&bytes)), from_file, "stdin");

    let dir = fixtures::scratch("input-kinds");
    let fifo = dir.join("snap.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success(), "mkfifo failed");
    let writer = {
        let (fifo, bytes) = (fifo.clone(), bytes.clone());
        // Opening a pipe for writing waits for its reader: the memsnap process below.
        std::thread::spawn(move || std::fs::write(fifo, bytes).expect("write the pipe"))
    };
    assert_eq!(
        stats(fifo.to_str().expect("path"), None),
        from_file,
        "named pipe"
    );
    writer.join().expect("pipe writer");

    let gz = dir.join("snap.pickle.gz");
    gzip_to(&bytes, &gz);
    assert_eq!(stats(gz.to_str().expect("path"), None), from_file, "gzip");

    let empty = dir.join("empty.pickle");
    std::fs::write(&empty, b"").expect("write empty file");
    let out = memsnap_bin::run(&["stats", empty.to_str().expect("path")], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "empty file: {stderr}");
    assert!(stderr.contains("empty input"), "empty file: {stderr}");
}

/// `bytes` gzipped into `path`, with flate2 (already a dependency here) rather than a `gzip`
/// process.
fn gzip_to(bytes: &[u8], path: &Path) {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("gzip the example");
    std::fs::write(path, e.finish().expect("finish gzip")).expect("write gz");
}
