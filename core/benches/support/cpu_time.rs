//! A criterion measurement of the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`)
//! rather than wall time: the machines these run on are shared with builds and tests, and
//! time spent waiting for a core is not the reader's. scripts/bench/bench_pickle.py measures
//! CPython the same way (`time.thread_time`).

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};

pub struct ThreadCpuTime;

/// Nanoseconds of CPU time this thread has used.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Values are durations like wall time's, so wall time's formatter prints them.
static WALL: WallTime = WallTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = Duration;

    fn start(&self) -> u64 {
        now_ns()
    }

    fn end(&self, start: u64) -> Duration {
        Duration::from_nanos(now_ns().saturating_sub(start))
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}
