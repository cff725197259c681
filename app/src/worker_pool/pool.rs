//! The pool itself (see the module's comment in `mod.rs`).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use memsnap_core::analysis::rank_summary::RankSummary;

use crate::client::WorkerClient;
use crate::protocol::{Progress, Request, Response};

/// One file to summarise: `index` is the caller's (its rank's place in the set).
pub struct Job {
    pub index: usize,
    pub rank: u32,
    pub file: web_sys::File,
    /// `file.size()` as read when the set opened. Asking a picked file its size goes through
    /// the wasm-to-JS glue and the first time to the browser (`Blob::CaptureSnapshot`, ~0.2 ms),
    /// so it is asked once.
    pub size: u64,
}

/// Jobs sent to a worker ahead of its answers: with one, a worker sat idle from its answer until
/// the page, busy redrawing thousands of bars, sent the next file (4,096 ranks took twice as long
/// per byte as 1,024). A worker answers in order, so its next file waits in its own queue.
const PER_WORKER: usize = 2;

/// A worker is replaced once it has been sent this many bytes (see `fill`).
const RECYCLE_BYTES: u64 = 128 << 20;

type OnProgress = Rc<dyn Fn(usize, Progress)>;
type OnDone = Rc<dyn Fn(usize, Result<RankSummary, String>)>;
/// The jobs a worker has been sent and not answered, oldest (the one it is on) first.
type Busy = Rc<RefCell<VecDeque<Job>>>;

#[derive(Clone)]
pub struct WorkerPool {
    inner: Rc<RefCell<Inner>>,
}

struct Inner {
    slots: Vec<Option<Slot>>,
    queue: VecDeque<Job>,
    on_progress: OnProgress,
    on_done: OnDone,
    stopped: bool,
}

struct Slot {
    client: WorkerClient,
    busy: Busy,
    /// Bytes of the files it has been sent.
    sent: u64,
}

impl WorkerPool {
    /// Starts `size` workers on `jobs`; `on_progress` gets each file's progress, `on_done` its
    /// summary or the reason it failed (naming the file), once per job.
    pub fn start(
        size: usize,
        jobs: Vec<Job>,
        on_progress: impl Fn(usize, Progress) + 'static,
        on_done: impl Fn(usize, Result<RankSummary, String>) + 'static,
    ) -> WorkerPool {
        let pool = WorkerPool {
            inner: Rc::new(RefCell::new(Inner {
                slots: (0..size).map(|_| None).collect(),
                queue: jobs.into(),
                on_progress: Rc::new(on_progress),
                on_done: Rc::new(on_done),
                stopped: false,
            })),
        };
        for slot in 0..size {
            pool.fill(slot);
        }
        pool
    }

    /// Stops every worker; no callback runs after this.
    pub fn stop(&self) {
        let mut inner = self.inner.borrow_mut();
        inner.stopped = true;
        inner.queue.clear();
        for slot in inner.slots.iter_mut() {
            if let Some(s) = slot.take() {
                s.client.terminate();
            }
        }
    }

    /// Sends slot `slot`'s worker queued jobs until it has `PER_WORKER`, starting (or
    /// replacing) the worker as needed; stops it once it has nothing left to do.
    fn fill(&self, slot: usize) {
        loop {
            let mut inner = self.inner.borrow_mut();
            if inner.stopped {
                return;
            }
            let (idle, worn) = match &inner.slots[slot] {
                Some(s) => (s.busy.borrow().is_empty(), s.sent >= RECYCLE_BYTES),
                None => (true, false),
            };
            // A worker that has parsed a lot is replaced once it is idle: its wasm memory never
            // shrinks, and hundreds of files of different sizes leave it larger than the largest
            // file needs. Until then it gets no more files.
            if worn || (idle && inner.queue.is_empty()) {
                if !idle {
                    return;
                }
                if let Some(s) = inner.slots[slot].take() {
                    s.client.terminate();
                }
            }
            if inner.queue.is_empty() {
                return;
            }
            if inner.slots[slot].is_none() {
                match self.spawn(slot, &inner.on_progress) {
                    Ok(s) => inner.slots[slot] = Some(s),
                    Err(message) => {
                        // No worker can start: every file fails with the reason.
                        let on_done = inner.on_done.clone();
                        let jobs: Vec<Job> = inner.queue.drain(..).collect();
                        drop(inner);
                        for job in jobs {
                            on_done(job.index, Err(format!("{}: {message}", job.file.name())));
                        }
                        return;
                    }
                }
            }
            let Some(s) = inner.slots[slot].as_mut() else {
                return;
            };
            if s.busy.borrow().len() >= PER_WORKER {
                return;
            }
            let Some(job) = inner.queue.pop_front() else {
                return;
            };
            let s = inner.slots[slot].as_mut().expect("checked above");
            s.sent += job.size;
            let (client, busy) = (s.client.clone(), s.busy.clone());
            drop(inner);
            self.send(&client, slot, &job);
            busy.borrow_mut().push_back(job);
        }
    }

    fn send(&self, client: &WorkerClient, slot: usize, job: &Job) {
        let (name, size) = (job.file.name(), job.size);
        let me = self.clone();
        let request = Request::Summarize {
            name: name.clone(),
            size,
            rank: job.rank,
        };
        let file: &wasm_bindgen::JsValue = job.file.as_ref();
        client.request(&request, Some(file), move |response| {
            let result = match response {
                Response::Summarized(s) => Ok(*s),
                Response::Failed { message } => Err(message),
                other => Err(format!("{name}: unexpected answer {other:?}")),
            };
            me.finish(slot, result);
        });
    }

    /// The worker in `slot` answered its oldest job.
    fn finish(&self, slot: usize, result: Result<RankSummary, String>) {
        let (job, on_done) = {
            let inner = self.inner.borrow();
            if inner.stopped {
                return;
            }
            let job = inner.slots[slot]
                .as_ref()
                .and_then(|s| s.busy.borrow_mut().pop_front());
            (job, inner.on_done.clone())
        };
        if let Some(job) = job {
            on_done(job.index, result);
        }
        self.fill(slot);
    }

    /// A worker for `slot` whose progress goes to the job it is on, and whose death fails that
    /// job (naming its file), puts the ones sent after it back in the queue, and hands the slot
    /// a fresh worker.
    fn spawn(&self, slot: usize, on_progress: &OnProgress) -> Result<Slot, String> {
        let busy: Busy = Rc::new(RefCell::new(VecDeque::new()));
        let on_progress = on_progress.clone();
        let (progress_busy, fatal_busy) = (busy.clone(), busy.clone());
        let me = self.clone();
        let client = WorkerClient::spawn(
            move |p| {
                let index = progress_busy.borrow().front().map(|j| j.index);
                if let Some(index) = index {
                    on_progress(index, p)
                }
            },
            move |message| {
                let mut jobs = std::mem::take(&mut *fatal_busy.borrow_mut());
                let Some(failed) = jobs.pop_front() else {
                    return;
                };
                let on_done = {
                    let mut inner = me.inner.borrow_mut();
                    if inner.stopped {
                        return;
                    }
                    // The worker's wasm may be in any state after a trap: replace it.
                    if let Some(s) = inner.slots[slot].take() {
                        s.client.terminate();
                    }
                    for job in jobs.into_iter().rev() {
                        inner.queue.push_front(job);
                    }
                    inner.on_done.clone()
                };
                on_done(
                    failed.index,
                    Err(format!("{}: {message}", failed.file.name())),
                );
                me.fill(slot);
            },
        )?;
        Ok(Slot {
            client,
            busy,
            sent: 0,
        })
    }
}
