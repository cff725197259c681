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
}

/// A worker is replaced once it has parsed this many bytes (see `next`).
const RECYCLE_BYTES: u64 = 128 << 20;

type OnProgress = Rc<dyn Fn(usize, Progress)>;
type OnDone = Rc<dyn Fn(usize, Result<RankSummary, String>)>;
/// The job a worker is on: its index and file name.
type Busy = Rc<RefCell<Option<(usize, String)>>>;

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
    /// Bytes of the files it has parsed.
    parsed: u64,
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
            pool.next(slot);
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

    /// Workers running now (they stop once the queue is empty).
    pub fn running(&self) -> usize {
        self.inner.borrow().slots.iter().flatten().count()
    }

    /// Gives slot `slot` the next queued job (starting its worker if needed), or stops its
    /// worker when there is none.
    fn next(&self, slot: usize) {
        loop {
            let mut inner = self.inner.borrow_mut();
            if inner.stopped {
                return;
            }
            let Some(job) = inner.queue.pop_front() else {
                if let Some(s) = inner.slots[slot].take() {
                    s.client.terminate();
                }
                return;
            };
            // A worker that has parsed a lot is replaced: its wasm memory never shrinks, and
            // parsing hundreds of files of different sizes leaves it fragmented and larger
            // than the largest file needs.
            if inner.slots[slot]
                .as_ref()
                .is_some_and(|s| s.parsed >= RECYCLE_BYTES)
            {
                if let Some(s) = inner.slots[slot].take() {
                    s.client.terminate();
                }
            }
            if inner.slots[slot].is_none() {
                match self.spawn(slot, &inner.on_progress) {
                    Ok(s) => inner.slots[slot] = Some(s),
                    Err(message) => {
                        let on_done = inner.on_done.clone();
                        drop(inner);
                        on_done(job.index, Err(format!("{}: {message}", job.file.name())));
                        continue;
                    }
                }
            }
            let Some(s) = inner.slots[slot].as_ref() else {
                return;
            };
            let client = s.client.clone();
            *s.busy.borrow_mut() = Some((job.index, job.file.name()));
            let size = job.file.size() as u64;
            if let Some(s) = inner.slots[slot].as_mut() {
                s.parsed += size;
            }
            drop(inner);
            return self.send(&client, slot, job);
        }
    }

    fn send(&self, client: &WorkerClient, slot: usize, job: Job) {
        let (name, size) = (job.file.name(), job.file.size() as u64);
        let me = self.clone();
        let index = job.index;
        let request = Request::Summarize {
            name: name.clone(),
            size,
            rank: job.rank,
        };
        client.request(&request, Some(&job.file.into()), move |response| {
            let result = match response {
                Response::Summarized(s) => Ok(*s),
                Response::Failed { message } => Err(message),
                other => Err(format!("{name}: unexpected answer {other:?}")),
            };
            me.finish(slot, index, result);
        });
    }

    fn finish(&self, slot: usize, index: usize, result: Result<RankSummary, String>) {
        let on_done = {
            let inner = self.inner.borrow();
            if inner.stopped {
                return;
            }
            if let Some(s) = &inner.slots[slot] {
                *s.busy.borrow_mut() = None;
            }
            inner.on_done.clone()
        };
        on_done(index, result);
        self.next(slot);
    }

    /// A worker for `slot` whose progress goes to its current job, and whose death fails that
    /// job (naming its file) and hands the slot a fresh worker.
    fn spawn(&self, slot: usize, on_progress: &OnProgress) -> Result<Slot, String> {
        let busy: Busy = Rc::new(RefCell::new(None));
        let on_progress = on_progress.clone();
        let (progress_busy, fatal_busy) = (busy.clone(), busy.clone());
        let me = self.clone();
        let client = WorkerClient::spawn(
            move |p| {
                if let Some((index, _)) = &*progress_busy.borrow() {
                    on_progress(*index, p)
                }
            },
            move |message| {
                let Some((index, name)) = fatal_busy.borrow_mut().take() else {
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
                    inner.on_done.clone()
                };
                on_done(index, Err(format!("{name}: {message}")));
                me.next(slot);
            },
        )?;
        Ok(Slot {
            client,
            busy,
            parsed: 0,
        })
    }
}
