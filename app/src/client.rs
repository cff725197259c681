//! The page side of the worker protocol: spawns the worker, queues requests until it is ready,
//! and routes each response to the callback of the request that asked for it.

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
    pending: HashMap<RequestId, Reply>,
}

impl WorkerClient {
    /// `on_progress` gets every progress report; `on_fatal` a message when the worker cannot run.
    pub fn spawn(
        on_progress: impl Fn(Progress) + 'static,
        on_fatal: impl Fn(String) + 'static,
    ) -> Result<WorkerClient, String> {
        let worker =
            Worker::new(WORKER_SCRIPT).map_err(|e| format!("could not start the worker: {e:?}"))?;
        let client = WorkerClient {
            inner: Rc::new(RefCell::new(Inner {
                worker: worker.clone(),
                ready: false,
                queued: Vec::new(),
                next_id: 1,
                pending: HashMap::new(),
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
        let id = inner.next_id;
        inner.next_id += 1;
        inner.pending.insert(id, Box::new(on_reply));
        let message = Array::of1(&Uint8Array::from(encode(id, request).as_slice()));
        if let Some(a) = attachment {
            message.push(a);
        }
        if inner.ready {
            post(&inner.worker, &message);
        } else {
            inner.queued.push(message);
        }
    }

    /// Stops the worker (its snapshot is freed); pending replies never come.
    pub fn terminate(&self) {
        let mut inner = self.inner.borrow_mut();
        inner.worker.terminate();
        inner.pending.clear();
        inner.queued.clear();
    }

    fn receive(
        &self,
        event: MessageEvent,
        on_progress: &dyn Fn(Progress),
        on_fatal: &dyn Fn(String),
    ) {
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
                let mut inner = self.inner.borrow_mut();
                inner.ready = true;
                for message in std::mem::take(&mut inner.queued) {
                    post(&inner.worker, &message);
                }
            }
            Response::Progress(p) => on_progress(p),
            body => {
                // Take the callback out first: it may send new requests.
                let reply = self.inner.borrow_mut().pending.remove(&envelope.id);
                match (reply, body) {
                    (Some(reply), body) => reply(body),
                    (None, Response::Failed { message }) => on_fatal(message),
                    (None, _) => {}
                }
            }
        }
    }
}

fn post(worker: &Worker, message: &Array) {
    if let Err(e) = worker.post_message(message) {
        web_sys::console::error_2(&"memsnap: postMessage to the worker failed".into(), &e);
    }
}
