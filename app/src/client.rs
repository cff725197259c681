//! The page side of the worker protocol: spawns the worker, queues requests until it is ready,
//! and routes each response to the callback of the request that asked for it.
//!
//! A slow analysis (diagnosis, flame graph, anomalies: tens to hundreds of ms at a million
//! entries) must not hold up a timeline zoom. Those go as *background* requests: held here until
//! no foreground request has been pending for `IDLE_MS`, posted one at a time, the latest of each
//! kind replacing an older one still held. The worker runs them in slices and answers a
//! foreground request between two (`worker::paced`), so a zoom step that lands during one waits
//! for a slice, not the analysis. A background answer that comes while a foreground one is
//! awaited is applied after it (`deferred`): drawing the insights panel the first time took the
//! page 14 ms, which the answer to a zoom step arriving meanwhile had to wait for.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::protocol::{decode, encode, Progress, Request, RequestId, Response};

/// Trunk names the worker's loader after its binary (worker files are not hashed). Relative, so
/// the page works from any sub-path.
const WORKER_SCRIPT: &str = "./memsnap-worker_loader.js";

type Reply = Box<dyn FnOnce(Response)>;

/// How long the foreground must have been idle before a background request is posted.
const IDLE_MS: f64 = 150.0;

#[derive(Clone)]
pub struct WorkerClient {
    inner: Rc<RefCell<Inner>>,
}

struct Inner {
    worker: Worker,
    ready: bool,
    /// Messages sent before the worker said `Ready` (the worker drops what comes earlier).
    queued: Vec<Array>,
    next_id: RequestId,
    /// Replies by request id, and whether the request went in the background.
    pending: HashMap<RequestId, (Reply, bool)>,
    /// Foreground requests posted and not yet answered.
    foreground: usize,
    /// When the last foreground answer came (`perf::now()`).
    idle_since: f64,
    /// Background requests held back, at most one per kind, oldest first.
    background: Vec<(Request, Reply)>,
    background_in_flight: bool,
    /// Background answers held until no foreground request is pending.
    deferred: Vec<(Reply, Response)>,
}

impl WorkerClient {
    /// `on_progress` gets every progress report; `on_fatal` a message when the worker cannot run.
    pub fn spawn(
        on_progress: impl Fn(Progress) + 'static,
        on_fatal: impl Fn(String) + 'static,
    ) -> Result<WorkerClient, String> {
        let worker = match crate::report::worker() {
            Some(started) => started?,
            None => Worker::new(WORKER_SCRIPT)
                .map_err(|e| format!("could not start the worker: {e:?}"))?,
        };
        let client = WorkerClient {
            inner: Rc::new(RefCell::new(Inner {
                worker: worker.clone(),
                ready: false,
                queued: Vec::new(),
                next_id: 1,
                pending: HashMap::new(),
                foreground: 0,
                idle_since: 0.0,
                background: Vec::new(),
                background_in_flight: false,
                deferred: Vec::new(),
            })),
        };
        let on_fatal = Rc::new(on_fatal);
        let me = client.clone();
        let fatal = on_fatal.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            me.receive(e, &on_progress, &*fatal)
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |e: ErrorEvent| {
            on_fatal(format!("the worker failed: {}", e.message()))
        });
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        Ok(client)
    }

    /// Sends `request` (with `attachment`, e.g. a `File`, as the message's second element);
    /// `on_reply` gets the final response (progress goes to `spawn`'s `on_progress`).
    pub fn request(
        &self,
        request: &Request,
        attachment: Option<&JsValue>,
        on_reply: impl FnOnce(Response) + 'static,
    ) {
        let mut inner = self.inner.borrow_mut();
        inner.foreground += 1;
        inner.post_request(request, attachment, Box::new(on_reply), false);
    }

    /// Sends `request` when the foreground is idle (see the module's comment); a held request
    /// of the same kind is dropped for this one (its reply never comes).
    pub fn request_background(&self, request: Request, on_reply: impl FnOnce(Response) + 'static) {
        {
            let mut inner = self.inner.borrow_mut();
            let kind = request.kind();
            inner.background.retain(|(r, _)| r.kind() != kind);
            inner.background.push((request, Box::new(on_reply)));
        }
        self.pump();
    }

    /// Drops the background requests held (never sent; their replies never come).
    pub fn drop_background(&self) {
        self.inner.borrow_mut().background.clear();
    }

    /// Applies the background answers held while the foreground was busy, in a task of their
    /// own: the foreground answer's effects (a timeline draw) run first, and the browser may
    /// show that frame before these.
    fn apply_deferred(&self) {
        let me = self.clone();
        let later = Closure::once_into_js(move || me.run_deferred());
        let scheduled = web_sys::window().is_some_and(|w| {
            w.set_timeout_with_callback_and_timeout_and_arguments_0(later.unchecked_ref(), 0)
                .is_ok()
        });
        if !scheduled {
            self.run_deferred();
        }
    }

    fn run_deferred(&self) {
        // Taken out first: a reply may send new requests.
        let deferred = std::mem::take(&mut self.inner.borrow_mut().deferred);
        for (reply, body) in deferred {
            reply(body);
        }
    }

    /// Posts the oldest held background request if the foreground has been idle long enough,
    /// else checks again when it may have been.
    fn pump(&self) {
        let wait = {
            let mut inner = self.inner.borrow_mut();
            if inner.foreground > 0 || inner.background_in_flight || inner.background.is_empty() {
                return;
            }
            let idle = crate::perf::now() - inner.idle_since;
            if idle >= IDLE_MS {
                let (request, reply) = inner.background.remove(0);
                inner.background_in_flight = true;
                inner.post_request(&request, None, reply, true);
                return;
            }
            IDLE_MS - idle
        };
        let me = self.clone();
        let again = Closure::once_into_js(move || me.pump());
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(
                again.unchecked_ref(),
                wait.ceil() as i32,
            );
        }
    }
}

impl Inner {
    fn post_request(
        &mut self,
        request: &Request,
        attachment: Option<&JsValue>,
        on_reply: Reply,
        background: bool,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        // Each answer is a `memsnap:request:<kind>` measure (sent to answered), for the benchmark.
        let (kind, sent) = (request.kind(), crate::perf::now());
        let reply: Reply = Box::new(move |r| {
            crate::perf::measure_since(&format!("{}{kind}", crate::perf::REQUEST), sent);
            on_reply(r)
        });
        self.pending.insert(id, (reply, background));
        let message = Array::of1(&Uint8Array::from(encode(id, request).as_slice()));
        if let Some(a) = attachment {
            message.push(a);
        }
        if self.ready {
            post(&self.worker, &message);
        } else {
            self.queued.push(message);
        }
    }
}

impl WorkerClient {
    /// Stops the worker (its snapshot is freed); pending replies never come.
    pub fn terminate(&self) {
        let mut inner = self.inner.borrow_mut();
        inner.worker.terminate();
        inner.pending.clear();
        inner.queued.clear();
        inner.background.clear();
        inner.foreground = 0;
        inner.background_in_flight = false;
        inner.deferred.clear();
    }

    fn receive(
        &self,
        event: MessageEvent,
        on_progress: &dyn Fn(Progress),
        on_fatal: &dyn Fn(String),
    ) {
        // A plain string is the worker's last word (`worker::out_of_memory`).
        if let Some(message) = event.data().as_string() {
            return on_fatal(message);
        }
        let Some(bytes) = Array::from(&event.data())
            .get(0)
            .dyn_into::<Uint8Array>()
            .ok()
        else {
            return on_fatal("the worker sent a message without bytes".into());
        };
        let envelope = match decode::<Response>(&bytes.to_vec()) {
            Ok(e) => e,
            Err(e) => return on_fatal(e.to_string()),
        };
        match envelope.body {
            Response::Ready => {
                crate::perf::mark(crate::perf::WORKER_READY);
                let mut inner = self.inner.borrow_mut();
                inner.ready = true;
                for message in std::mem::take(&mut inner.queued) {
                    post(&inner.worker, &message);
                }
            }
            Response::Progress(p) => on_progress(p),
            Response::WarmedUp(summary) => crate::rehearsal::warmed_up(*summary),
            body => {
                // Take the callback out first: it may send new requests.
                let (reply, defer, foreground_done) = {
                    let mut inner = self.inner.borrow_mut();
                    let reply = inner.pending.remove(&envelope.id);
                    let mut defer = false;
                    let mut foreground_done = false;
                    match reply {
                        Some((_, true)) => {
                            inner.background_in_flight = false;
                            defer = inner.foreground > 0;
                        }
                        Some((_, false)) => {
                            inner.foreground = inner.foreground.saturating_sub(1);
                            inner.idle_since = crate::perf::now();
                            foreground_done = inner.foreground == 0 && !inner.deferred.is_empty();
                        }
                        None => {}
                    }
                    (reply.map(|(r, _)| r), defer, foreground_done)
                };
                match (reply, body) {
                    (Some(_), Response::Cancelled) => {}
                    (Some(reply), body) if defer => {
                        self.inner.borrow_mut().deferred.push((reply, body))
                    }
                    (Some(reply), body) => reply(body),
                    (None, Response::Failed { message }) => on_fatal(message),
                    (None, _) => {}
                }
                if foreground_done {
                    self.apply_deferred();
                }
                self.pump();
            }
        }
    }
}

fn post(worker: &Worker, message: &Array) {
    if let Err(e) = worker.post_message(message) {
        web_sys::console::error_2(&"memsnap: postMessage to the worker failed".into(), &e);
    }
}
