//! Helpers for the headless-Chromium tests of the built site (tests/tests/page_*.rs):
//! a static file server for dist/, a chromedriver + Chromium session, and page helpers.

pub mod browser;
pub mod cdp;
pub mod dist;
pub mod memoryviz;
pub mod page;
pub mod perf;
pub mod read_floor;
pub mod report;
pub mod server;
pub mod whatif;
pub mod workers;
