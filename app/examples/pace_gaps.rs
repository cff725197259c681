//! The longest stretches a paced answer runs without asking to give way, natively: the worker
//! answers a zoom only between two such questions, so each stretch is a zoom's wait at worst.
//!
//! `cargo run --release -p memsnap-app --example pace_gaps -- FILE|generated:N [insights|anomalies|flame]`
//!
//! `generated:N` is the replay bench's N-entry trace (`core/benches/support/generated.rs`), made
//! by the model itself, so every replay behind the Insights panel runs on it. Prints the answer's
//! total time, how many stretches took over 3 ms, and where the four longest began and ended
//! (the innermost memsnap frames of the two questions). Backtraces are taken at every question,
//! outside the stretches they bound.

use std::backtrace::Backtrace;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Waker};
use std::time::Instant;

use memsnap_app::protocol::analysis::{EntryRange, FlameMeasure, FlameRequest};
use memsnap_app::protocol::Request;
use memsnap_app::viewmodel::{Analyses, PacedAnswer};
use memsnap_core::analysis::pace::Pace;

#[path = "../../core/benches/support/generated.rs"]
mod generated;

const REPORTED_MS: f64 = 3.0;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: pace_gaps FILE|generated:N [insights|anomalies|flame]";
    let input = args.next().ok_or(usage)?;
    let kind = args.next().unwrap_or_else(|| "insights".into());
    let mut snap = match input.strip_prefix("generated:") {
        Some(n) => generated::generated(n.parse().map_err(|e| format!("{n}: {e}"))?),
        None => {
            let bytes = std::fs::read(&input).map_err(|e| format!("{input}: {e}"))?;
            memsnap_core::snapshot::read(&bytes).map_err(|e| format!("{input}: {e}"))?
        }
    };
    let mut cache = Analyses::for_open(&mut snap);
    let snap = Rc::new(snap);
    let whole = EntryRange {
        start: 0,
        end: snap.trace(0).len() as u64,
    };
    let request = match kind.as_str() {
        "insights" => Request::Insights { device: 0 },
        "anomalies" => Request::Anomalies {
            device: 0,
            range: whole,
        },
        "flame" => Request::Flame(FlameRequest {
            device: 0,
            range: whole,
            measure: FlameMeasure::LiveAt(None),
            all_frames: false,
        }),
        other => return Err(format!("{other}: {usage}")),
    };
    let job = PacedAnswer::of(&snap, &mut cache, &request)
        .ok_or_else(|| format!("{kind} is answered at once here, not paced"))?;

    let started = Instant::now();
    let mut last = Instant::now();
    let mut last_where = Backtrace::force_capture();
    let mut long: Vec<(f64, String, String)> = Vec::new();
    let mut give_way = || {
        let ms = last.elapsed().as_secs_f64() * 1e3;
        let here = Backtrace::force_capture();
        if ms > REPORTED_MS {
            long.push((ms, innermost(&last_where), innermost(&here)));
        }
        last_where = here;
        last = Instant::now();
        false
    };
    {
        let mut pace = Pace::new(&mut give_way);
        let mut answer = pin!(job.answer(&mut pace));
        let mut cx = Context::from_waker(Waker::noop());
        while answer.as_mut().poll(&mut cx).is_pending() {}
    }
    let total = started.elapsed().as_secs_f64() * 1e3;
    println!(
        "{kind} on {input}: {total:.1} ms, {} stretches over {REPORTED_MS} ms",
        long.len()
    );
    long.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, from, to) in long.iter().take(4) {
        println!("  {ms:.1} ms: from {from}\n           to {to}");
    }
    Ok(())
}

/// Where a question was asked: the first two source lines of this workspace below `Pace`.
fn innermost(b: &Backtrace) -> String {
    let text = b.to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("at ./core/src") || l.starts_with("at ./app/src"))
        .filter(|l| !l.contains("analysis/pace.rs"))
        .take(2)
        .collect();
    lines.join(" < ")
}
