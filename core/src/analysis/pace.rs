//! Giving way inside a long analysis. In the browser one worker holds the snapshot and answers
//! everything, so a flame graph or a diagnosis at a million entries (20–100 ms) would hold up a
//! timeline zoom queued behind it. The analyses that can take that long are `async` and call
//! [`Pace::tick`] once per unit of work; every [`CHECK_EVERY`] ticks it asks its caller whether
//! to give way, and if so the analysis returns `Pending` once, to be polled again later. The
//! worker lets waiting requests run in between; the CLI and the tests run them to the end with
//! [`finish`] and [`Pace::never`], which never gives way. Nothing here knows of a browser.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Ticks between two questions to the caller: about 10–50 µs of analysis work. A power of
/// two (the check is a mask).
pub const CHECK_EVERY: u32 = 1024;
const _: () = assert!(CHECK_EVERY.is_power_of_two());

/// Items between two checks in a loop over chunks, `for chunk in xs.chunks(CHUNK) {
/// pace.check().await; for x in chunk { .. } }`: the inner loop stays plain code (an `await`
/// inside it kept its locals in the future's memory and cost churn a third of its time).
pub const CHUNK: usize = CHECK_EVERY as usize;

pub struct Pace<'a> {
    give_way: Option<&'a mut dyn FnMut() -> bool>,
    ticks: u32,
}

impl Pace<'static> {
    /// Runs to the end without giving way.
    pub fn never() -> Pace<'static> {
        Pace {
            give_way: None,
            ticks: 0,
        }
    }
}

impl<'a> Pace<'a> {
    /// Gives way when `give_way` says so (the worker: when its time slice is spent).
    pub fn new(give_way: &'a mut dyn FnMut() -> bool) -> Pace<'a> {
        Pace {
            give_way: Some(give_way),
            ticks: 0,
        }
    }

    /// One unit of work done (for loops that are not over a slice; see [`CHUNK`]).
    #[inline]
    pub async fn tick(&mut self) {
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks & (CHECK_EVERY - 1) == 0 {
            self.check().await;
        }
    }

    /// Asks now (between the phases of an analysis).
    pub async fn check(&mut self) {
        if let Some(give_way) = self.give_way.as_mut() {
            if give_way() {
                GiveWay { given: false }.await;
            }
        }
    }
}

/// `Pending` once, then `Ready`. It does not wake anyone: the worker's driver polls again when
/// it has let the waiting requests run (`Waker::noop` everywhere).
struct GiveWay {
    given: bool,
}

impl Future for GiveWay {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.given {
            Poll::Ready(())
        } else {
            self.given = true;
            Poll::Pending
        }
    }
}

/// Polls `f` until it is done: with [`Pace::never`] that is one poll.
pub fn finish<T>(f: impl Future<Output = T>) -> T {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn count(n: u32, pace: &mut Pace<'_>) -> u32 {
        let mut done = 0;
        for _ in 0..n {
            done += 1;
            pace.tick().await;
        }
        done
    }

    #[test]
    fn never_finishes_in_one_poll() {
        let mut pace = Pace::never();
        let mut f = pin!(count(10 * CHECK_EVERY, &mut pace));
        let mut cx = Context::from_waker(Waker::noop());
        assert_eq!(f.as_mut().poll(&mut cx), Poll::Ready(10 * CHECK_EVERY));
    }

    #[test]
    fn gives_way_when_asked_and_resumes_where_it_was() {
        let asked = std::cell::Cell::new(0);
        let mut give_way = || {
            asked.set(asked.get() + 1);
            true
        };
        let mut pace = Pace::new(&mut give_way);
        let mut f = pin!(count(3 * CHECK_EVERY + 5, &mut pace));
        let mut cx = Context::from_waker(Waker::noop());
        let mut pendings = 0;
        let done = loop {
            match f.as_mut().poll(&mut cx) {
                Poll::Ready(v) => break v,
                Poll::Pending => pendings += 1,
            }
        };
        assert_eq!(done, 3 * CHECK_EVERY + 5);
        assert_eq!(pendings, 3);
        assert_eq!(asked.get(), 3);
    }
}
