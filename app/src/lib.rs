//! memsnap's viewer. The page (`main.rs`, Leptos) shows view models; the worker
//! (`bin/memsnap-worker.rs`) holds the parsed snapshot and builds them (`viewmodel`), and the two
//! talk through `protocol`. With several files, `worker_pool` summarises them and `rank_lru`
//! picks the detail worker of the rank shown. Only the modules without web APIs are built
//! natively (for tests).

pub mod folder_files;
pub mod format;
pub mod protocol;
pub mod rank_lru;
pub mod rank_names;
pub mod size_limit;
pub mod stack_table;
pub mod url_name;
pub mod viewmodel;
pub mod worker_pool;

#[cfg(target_arch = "wasm32")]
pub mod app;
#[cfg(target_arch = "wasm32")]
pub mod client;
#[cfg(target_arch = "wasm32")]
pub mod dom;
#[cfg(target_arch = "wasm32")]
pub mod dropped_files;
#[cfg(target_arch = "wasm32")]
pub mod js_error;
#[cfg(target_arch = "wasm32")]
pub mod perf;
#[cfg(target_arch = "wasm32")]
pub mod rehearsal;
#[cfg(target_arch = "wasm32")]
pub mod report;
#[cfg(target_arch = "wasm32")]
pub mod state;
#[cfg(target_arch = "wasm32")]
pub mod views;
#[cfg(target_arch = "wasm32")]
pub mod worker;
