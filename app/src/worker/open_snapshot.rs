//! The snapshot the worker has open, with what the analysis views reuse for it, and whether it
//! is the warm-up's rather than a file of the user's.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use memsnap_core::snapshot::Snapshot;

use crate::viewmodel::Analyses;

thread_local! {
    /// The open snapshot. A failed open leaves the user's as it was (the warm-up's is freed as
    /// any open starts, `drop_warm_up`). Shared with the analyses under way (`paced`).
    pub(super) static OPEN: RefCell<Option<Rc<Snapshot>>> = const { RefCell::new(None) };
    /// What the analysis views reuse for the open snapshot (timelines, state histories).
    pub(super) static CACHE: RefCell<Analyses> = RefCell::new(Analyses::new());
    /// The open snapshot is the warm-up's (`warm_up`), not a file the user opened.
    pub(super) static WARM_UP_OPEN: Cell<bool> = const { Cell::new(false) };
}

/// Makes `snapshot`, indexed in `cache`, the open one; returns the one it replaces.
pub(super) fn install(snapshot: Snapshot, cache: Analyses) -> (Option<Rc<Snapshot>>, Analyses) {
    let replaced = OPEN.with(|open| open.borrow_mut().replace(Rc::new(snapshot)));
    let replaced_cache = CACHE.with(|c| std::mem::replace(&mut *c.borrow_mut(), cache));
    (replaced, replaced_cache)
}

/// Frees the warm-up's snapshot and its views, if it is the open one, as a file of the user's
/// is about to be read: only the rehearsal used it, and the page ended that before asking. Freed
/// after the read instead (as a file of the user's is, `opened`), its heap was not there for
/// the reader to reuse, and a wasm memory never shrinks: the worker after a first open was
/// 0.20–1.64 MB larger on 10 of the 16 real fixtures and 2.9 MB on the 100 MB file (page bench).
pub(super) fn drop_warm_up() {
    if WARM_UP_OPEN.replace(false) {
        OPEN.with(|open| open.borrow_mut().take());
        CACHE.with(|c| *c.borrow_mut() = Analyses::new());
    }
}

/// Opens the warm-up's snapshot, unless a file was opened meanwhile.
pub(super) fn install_warm_up(snapshot: Snapshot, cache: Analyses) {
    if OPEN.with(|open| open.borrow().is_none()) {
        // Nothing was open, so nothing is replaced.
        let _ = install(snapshot, cache);
        WARM_UP_OPEN.set(true);
    }
}
