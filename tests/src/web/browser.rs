//! A headless Chromium driven through Debian's chromedriver, one per test.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;

/// Flags for a quiet, sandbox-free headless run. The background-networking ones matter: without
/// them Chromium keeps retrying Google services and floods a machine with no outside network.
const CHROMIUM_ARGS: &[&str] = &[
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--window-size=1440,900",
    // performance.memory in bytes, not in coarse buckets (the page benchmark reads it).
    "--enable-precise-memory-info",
];

pub struct Browser {
    pub client: Client,
    /// Chromium's DevTools address (`host:port`, as chromedriver started it), for what
    /// chromedriver's passthrough cannot reach (`workers.rs`).
    pub debugger: Option<String>,
    driver: Child,
    profile: PathBuf,
}

fn tool(env: &str, default: &str) -> PathBuf {
    std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default))
}

impl Browser {
    /// Starts chromedriver and a Chromium session. `None` after a loud warning when Chromium or
    /// chromedriver is not installed (scripts/setup.sh installs both). `MEMSNAP_CHROMIUM_ARGS`
    /// adds flags.
    pub async fn start() -> Option<Browser> {
        let chromium = tool("CHROMIUM", "/usr/bin/chromium");
        let chromedriver = tool("CHROMEDRIVER", "/usr/bin/chromedriver");
        if !chromium.is_file() || !chromedriver.is_file() {
            eprintln!(
                "WARNING: {} or {} not found: skipping the page test (scripts/setup.sh installs them)",
                chromium.display(),
                chromedriver.display()
            );
            return None;
        }
        let port = free_port();
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", chromedriver.display()));
        let profile =
            std::env::temp_dir().join(format!("memsnap-chromium-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        // Dropping the partly built Browser kills the driver if anything below fails.
        let mut browser = PartialBrowser {
            driver: Some(driver),
            profile: profile.clone(),
        };
        wait_for_port(port, Duration::from_secs(20));
        let mut args: Vec<String> = CHROMIUM_ARGS.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.display()));
        // For experiments (e.g. `--js-flags=--no-wasm-dynamic-tiering`): extra flags, by spaces.
        if let Ok(extra) = std::env::var("MEMSNAP_CHROMIUM_ARGS") {
            args.extend(extra.split_whitespace().map(str::to_string));
        }
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({ "binary": chromium, "args": args }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|e| panic!("starting a Chromium session through chromedriver: {e}"));
        let debugger = client
            .capabilities()
            .and_then(|c| c.get("goog:chromeOptions"))
            .and_then(|o| o["debuggerAddress"].as_str())
            .map(str::to_string);
        Some(Browser {
            client,
            debugger,
            driver: browser.driver.take()?,
            profile,
        })
    }

    /// Memory of this session's Chromium over all its processes (browser, renderers, GPU,
    /// utilities; a dedicated worker is a thread of its page's renderer).
    pub fn memory(&self) -> ProcessMemory {
        session_memory(&self.profile)
    }

    /// Ends the session (Chromium exits), then the driver.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        kill_strays(&self.profile);
        remove_profile(&self.profile);
    }
}

struct PartialBrowser {
    driver: Option<Child>,
    profile: PathBuf,
}

impl Drop for PartialBrowser {
    fn drop(&mut self) {
        if let Some(mut d) = self.driver.take() {
            let _ = d.kill();
            let _ = d.wait();
            remove_profile(&self.profile);
        }
    }
}

/// Summed over a Chromium session's processes, in bytes. RSS counts shared pages (libraries,
/// shared memory) once per process; PSS splits them between the processes sharing them, so
/// the PSS sum is what the session as a whole holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessMemory {
    pub processes: usize,
    pub rss: u64,
    pub pss: u64,
    /// PSS of the renderers alone (a page and its dedicated workers).
    pub renderer_pss: u64,
}

#[cfg(target_os = "linux")]
fn session_memory(profile: &Path) -> ProcessMemory {
    let mut m = ProcessMemory::default();
    for pid in session_pids(profile) {
        // "Rss:   1234 kB" lines; a process that exited meanwhile is skipped.
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) else {
            continue;
        };
        let kb = |key: &str| {
            text.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
                * 1024
        };
        m.processes += 1;
        m.rss += kb("Rss:");
        m.pss += kb("Pss:");
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline.windows(15).any(|w| w == b"--type=renderer") {
            m.renderer_pss += kb("Pss:");
        }
    }
    m
}

#[cfg(not(target_os = "linux"))]
fn session_memory(_profile: &Path) -> ProcessMemory {
    ProcessMemory::default()
}

/// This session's Chromium processes: those with its profile folder in their command line.
/// Renderers rewrite theirs as one line with spaces (their process title), so the flag is
/// looked for as a word in either form.
#[cfg(target_os = "linux")]
fn session_pids(profile: &Path) -> Vec<i32> {
    let needle = format!("--user-data-dir={}", profile.display());
    let needle = needle.as_bytes();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|p| {
            let pid = p.file_name().to_str()?.parse::<i32>().ok()?;
            let cmdline = std::fs::read(p.path().join("cmdline")).ok()?;
            cmdline
                .split(|&b| b == 0 || b == b' ')
                .any(|arg| arg == needle)
                .then_some(pid)
        })
        .collect()
}

/// Kills what is left of this session's Chromium. Killing chromedriver orphans the browser, and
/// ending the session first can fail or time out (a page bench left a Chromium running after
/// its test): its processes are found by this session's profile folder in their command line.
#[cfg(target_os = "linux")]
fn kill_strays(profile: &Path) {
    for pid in session_pids(profile) {
        // SAFETY: kill(2) takes plain integers; a pid that has exited meanwhile just fails.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

#[cfg(not(target_os = "linux"))]
fn kill_strays(_profile: &Path) {}

fn remove_profile(p: &Path) {
    // Chromium may still be writing for a moment after the session ends.
    for _ in 0..10 {
        if std::fs::remove_dir_all(p).is_ok() || !p.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free local port: {e}"))
}

fn wait_for_port(port: u16, timeout: Duration) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < timeout,
            "chromedriver did not listen on port {port} within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
