//! Which panel of the views column is being looked at, for the address: the one last clicked,
//! or after a scroll the one at the top of the column; and bringing a named panel back into
//! view. A panel is named by its class after `panel` (`flame`, `segment-view`, `whatif`).

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Element;

/// Pixels of slack at the column's top: a panel scrolled to it may sit this far above it.
const SHOWN_PX: f64 = 24.0;

fn name_of(section: &Element) -> Option<String> {
    let classes = section.class_list();
    (0..classes.length())
        .filter_map(|i| classes.item(i))
        .find(|c| c != "panel")
}

fn views() -> Option<Element> {
    document().query_selector("main.views").ok().flatten()
}

fn panels() -> Vec<Element> {
    let Ok(list) = document().query_selector_all("main.views section.panel") else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<Element>().ok())
        .collect()
}

/// The panel holding `target` (a click's), if it is one of the views column's.
pub fn clicked(target: Option<web_sys::EventTarget>) -> Option<String> {
    let el = target?.dyn_into::<Element>().ok()?;
    let section = el.closest("main.views section.panel").ok()??;
    name_of(&section)
}

/// The panel looked at after a scroll: the first whose top is in the upper half of the views
/// column's viewport (a panel near the page's end cannot be scrolled to the top, but its top
/// comes up), else the one covering the column's top; `None` while neither the column nor the page is scrolled (the
/// view is the page's top, nothing to keep).
pub fn in_view() -> Option<String> {
    let views = views()?;
    let page_scrolled = window().scroll_y().unwrap_or(0.0) > 0.0;
    if views.scroll_top() == 0 && !page_scrolled {
        return None;
    }
    // The column's viewport, or the window's where the column is the page (narrow layouts).
    let v = views.get_bounding_client_rect();
    let height = window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(v.bottom());
    let (top, bottom) = (v.top().max(0.0), v.bottom().min(height));
    let rects: Vec<(Element, web_sys::DomRect)> = panels()
        .into_iter()
        .map(|p| {
            let r = p.get_bounding_client_rect();
            (p, r)
        })
        .filter(|(_, r)| r.height() > 0.0)
        .collect();
    rects
        .iter()
        .find(|(_, r)| r.top() >= top - SHOWN_PX && r.top() < (top + bottom) / 2.0)
        .or_else(|| {
            rects
                .iter()
                .find(|(_, r)| r.top() < top && r.bottom() > top + SHOWN_PX)
        })
        .and_then(|(p, _)| name_of(p))
}

/// Scrolls the panel `name` to the column's top once it is on the page, trying every
/// `every_ms` up to `tries` times (panels mount as their data arrives); `done` says whether it
/// was found.
pub fn show(name: String, tries: u32, every_ms: i32, done: impl FnOnce(bool) + 'static) {
    let found = panels()
        .into_iter()
        .find(|p| name_of(p).as_deref() == Some(name.as_str()));
    match found {
        Some(p) => {
            p.scroll_into_view();
            done(true)
        }
        None if tries == 0 => done(false),
        None => {
            let later = wasm_bindgen::closure::Closure::once_into_js(move || {
                show(name, tries - 1, every_ms, done)
            });
            let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(
                later.unchecked_ref(),
                every_ms,
            );
        }
    }
}
