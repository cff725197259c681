//! Runs the long analyses (`viewmodel::PacedAnswer`) a slice of `SLICE_MS` at a time. Between
//! two slices the worker goes back to its event loop, so a request that came meanwhile (a
//! timeline zoom) is answered before the analysis goes on: it waits for at most one slice, not
//! for the whole analysis (a diagnosis at a million entries took ~95 ms in one piece).
//!
//! The next slice is scheduled through a `MessageChannel`, not `setTimeout(0)`, which browsers
//! clamp to 4 ms once nested; the page's messages queued during a slice run before it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use memsnap_core::analysis::pace::Pace;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::MessageChannel;

use super::open_snapshot::CACHE;
use super::post::post;
use crate::perf;
use crate::protocol::{RequestId, Response};
use crate::viewmodel::{Paced, PacedAnswer};

/// The longest an analysis runs before it lets waiting requests through.
const SLICE_MS: f64 = 2.0;

struct Job {
    id: RequestId,
    kind: &'static str,
    started: f64,
    answer: Pin<Box<dyn Future<Output = Paced>>>,
}

thread_local! {
    /// Oldest first; the first one runs.
    static JOBS: RefCell<VecDeque<Job>> = const { RefCell::new(VecDeque::new()) };
    static SCHEDULED: Cell<bool> = const { Cell::new(false) };
    /// When the running slice is over (`perf::now()`).
    static SLICE_END: Cell<f64> = const { Cell::new(0.0) };
    static CHANNEL: Option<MessageChannel> = channel();
}

fn channel() -> Option<MessageChannel> {
    let channel = MessageChannel::new().ok()?;
    let on_message =
        Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| run_slice(perf::now() + SLICE_MS));
    channel
        .port1()
        .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // Lives as long as the worker.
    on_message.forget();
    Some(channel)
}

/// Answers `answer` in slices; request `id`'s response is posted when it is done.
pub fn start(id: RequestId, kind: &'static str, answer: PacedAnswer) {
    let answer = Box::pin(async move {
        let mut give_way = || perf::now() >= SLICE_END.get();
        let mut pace = Pace::new(&mut give_way);
        answer.answer(&mut pace).await
    });
    let job = Job {
        id,
        kind,
        started: perf::now(),
        answer,
    };
    JOBS.with(|j| j.borrow_mut().push_back(job));
    schedule();
}

/// Drops every analysis under way (another file is opening); each request is answered
/// `Cancelled`.
pub fn cancel_all() {
    let jobs = JOBS.with(|j| std::mem::take(&mut *j.borrow_mut()));
    for job in jobs {
        post(job.id, &Response::Cancelled);
    }
}

fn schedule() {
    if SCHEDULED.replace(true) {
        return;
    }
    let posted = CHANNEL.with(|c| {
        c.as_ref()
            .is_some_and(|c| c.port2().post_message(&JsValue::NULL).is_ok())
    });
    if !posted {
        // No channel (never seen in a browser with workers): run to the end now.
        run_slice(f64::INFINITY);
    }
}

/// Runs the first job until `end` (`perf::now()`), then schedules the next slice if any is left.
fn run_slice(end: f64) {
    SCHEDULED.set(false);
    let Some(mut job) = JOBS.with(|j| j.borrow_mut().pop_front()) else {
        return;
    };
    SLICE_END.set(end);
    let mut cx = Context::from_waker(Waker::noop());
    match job.answer.as_mut().poll(&mut cx) {
        Poll::Ready(Paced {
            response,
            anomalies,
        }) => {
            if let Some((device, found)) = anomalies {
                CACHE.with(|c| c.borrow_mut().keep_anomalies(device, found));
            }
            let answered = perf::now();
            post(job.id, &response);
            perf::measure_since(&format!("{}{}", perf::WORKER_ANSWER, job.kind), job.started);
            perf::measure_since(perf::WORKER_POST, answered);
        }
        Poll::Pending => JOBS.with(|j| j.borrow_mut().push_front(job)),
    }
    if JOBS.with(|j| !j.borrow().is_empty()) {
        schedule();
    }
}
