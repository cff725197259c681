//! Zooming and panning the timeline with the pointer, in headless Chromium: a wheel step
//! narrows the drawn range by the page's factor around the pointer, a drag moves it, a
//! double-click shows the whole trace again. After each, the range filter (its inputs and its
//! `data-start`/`data-end`) and the state slider's bounds show the range the canvas drew: they
//! change with the chart, not at the event. The file is built with `capture` (the `churn`
//! scenario of the allocator model).

use fantoccini::Client;
use memsnap_tests::built;
use memsnap_tests::fixtures::scratch;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until, Site};
use serde_json::{json, Value};

/// The timeline's drawn range, once it is drawn and differs from `not` (`data-drawn`).
async fn wait_drawn_other_than(c: &Client, what: &str, not: (u64, u64)) -> (u64, u64) {
    wait_until(&format!("the timeline drawn {what}"), || async {
        let got = page::attr(c, "timeline", "data-drawn").await?;
        let parsed = got
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
        match parsed {
            Some(r) if r != not => Ok(r),
            _ => Err(format!("data-drawn={got:?}")),
        }
    })
    .await
}

/// The range every range-showing control shows: the filter's inputs and data attributes, the
/// state slider's bounds and its scale.
async fn shown_ranges(c: &Client) -> Value {
    c.execute(
        "const q = (id) => document.querySelector(`[data-testid=\"${id}\"]`);
         const f = q('range-filter'), s = q('state-slider');
         const scale = [...s.parentElement.querySelectorAll('.slider-scale span')].map(e => e.textContent);
         return {inputs: [q('range-start').value, q('range-end').value],
                 filter: [f.dataset.start, f.dataset.end],
                 slider: [s.min, s.max], scale};",
        vec![],
    )
    .await
    .expect("reading the range controls")
}

/// Checks that all range controls show `r` (they follow the drawn chart).
async fn assert_controls_show(c: &Client, what: &str, r: (u64, u64)) {
    let want = json!([r.0.to_string(), r.1.to_string()]);
    let got = shown_ranges(c).await;
    for key in ["inputs", "filter", "slider", "scale"] {
        assert_eq!(
            got[key], want,
            "{what}: the {key} show another range ({got})"
        );
    }
}

/// Dispatches a pointer event on the timeline at `fx` of its width (`wheel` with `dy`, or a
/// mouse event with `buttons`).
async fn pointer(c: &Client, kind: &str, fx: f64, dy: f64, buttons: u32) {
    c.execute(
        "const [kind, fx, dy, buttons] = arguments;
         const cv = document.querySelector('[data-testid=\"timeline\"]');
         cv.scrollIntoView({block: 'center'});
         const b = cv.getBoundingClientRect();
         const init = {clientX: b.left + b.width * fx, clientY: b.top + 100, bubbles: true,
                       cancelable: true, deltaY: dy, buttons};
         cv.dispatchEvent(kind === 'wheel' ? new WheelEvent(kind, init) : new MouseEvent(kind, init));",
        vec![json!(kind), json!(fx), json!(dy), json!(buttons)],
    )
    .await
    .expect("a pointer event on the timeline");
}

#[tokio::test(flavor = "current_thread")]
async fn wheel_drag_and_double_click_move_the_drawn_range_and_the_controls_follow() {
    let Some(dist) = dist_dir() else { return };
    let dir = scratch("page-zoom");
    let file = dir.join("churn.pickle");
    let snapshot = built::capture(&["--scenario", "churn"], &file);
    let n = snapshot.trace(0).len() as u64;
    assert!(
        n >= 100,
        "the churn scenario's trace is long enough to zoom ({n} entries)"
    );

    let Some(site) = Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &file).await;
    page::wait_file_name(c, "churn.pickle").await;
    page::find(c, "state-slider").await;
    let whole = (0, n);
    page::wait_drawn(c, "the whole trace", whole.0, whole.1).await;
    assert_controls_show(c, "the whole trace", whole).await;

    // A wheel step in: 0.8 of the span, the entry under the pointer kept in place. Until the
    // chart has the worker's answer (a task of its own, after this script's microtasks, where
    // the page's effects run), the filter holds the new range and the controls the drawn one.
    let at_event = c
        .execute_async(
            "const [fx, done] = arguments;
             const q = (id) => document.querySelector(`[data-testid=\"${id}\"]`);
             const cv = q('timeline');
             cv.scrollIntoView({block: 'center'});
             const b = cv.getBoundingClientRect();
             cv.dispatchEvent(new WheelEvent('wheel', {clientX: b.left + b.width * fx,
                 clientY: b.top + 100, deltaY: -100, bubbles: true, cancelable: true}));
             (async () => {
               for (let i = 0; i < 100; i++) await null;
               done({drawn: cv.dataset.drawn, filter_end: q('range-filter').dataset.end,
                     input_end: q('range-end').value, slider_max: q('state-slider').max});
             })();",
            vec![json!(0.6)],
        )
        .await
        .expect("a wheel step on the timeline");
    let asked: u64 = at_event["filter_end"]
        .as_str()
        .and_then(|e| e.parse().ok())
        .unwrap_or_else(|| panic!("the range filter's end at the wheel event: {at_event}"));
    assert!(
        asked < n,
        "the filter asks for the zoomed range at once: {at_event}"
    );
    assert_eq!(
        (
            &at_event["drawn"],
            &at_event["input_end"],
            &at_event["slider_max"]
        ),
        (
            &json!(format!("0-{n}")),
            &json!(n.to_string()),
            &json!(n.to_string())
        ),
        "before the worker's answer the chart and the controls still show the whole trace"
    );
    let zoomed = wait_drawn_other_than(c, "zoomed in", whole).await;
    assert_eq!(
        zoomed.1, asked,
        "the chart draws the range the filter asked for"
    );
    let span = zoomed.1 - zoomed.0;
    assert_eq!(
        span,
        (n as f64 * 0.8).round() as u64,
        "one wheel step keeps 0.8 of {n}"
    );
    assert!(
        zoomed.0 > 0 && zoomed.1 < n,
        "zooming at 60% of the width trims both ends: {zoomed:?} of {n}"
    );
    assert_controls_show(c, "after a wheel step", zoomed).await;

    // A drag to the left shows later entries, the span unchanged.
    pointer(c, "mousedown", 0.6, 0.0, 1).await;
    pointer(c, "mousemove", 0.5, 0.0, 1).await;
    pointer(c, "mouseup", 0.5, 0.0, 0).await;
    let panned = wait_drawn_other_than(c, "panned", zoomed).await;
    assert!(
        panned.0 > zoomed.0 && panned.1 - panned.0 == span,
        "a drag to the left moves {zoomed:?} later, same span: {panned:?}"
    );
    assert_controls_show(c, "after a drag", panned).await;

    // A double-click: the whole trace again.
    c.execute(
        "document.querySelector(arguments[0]).dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));",
        vec![json!(testid("timeline"))],
    )
    .await
    .expect("double-clicking the timeline");
    let back = wait_drawn_other_than(c, "whole again", panned).await;
    assert_eq!(back, whole, "a double-click shows the whole trace");
    assert_controls_show(c, "after a double-click", whole).await;
    site.browser.close().await;
}
