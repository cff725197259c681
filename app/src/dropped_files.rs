//! The files of a drop, dropped folders walked. `DataTransfer.files` lists a dropped folder as
//! one unreadable entry, so folders are read through `webkitGetAsEntry` (every current browser
//! has it): each directory's entries come in batches until an empty one, and each file entry
//! gives its `File` through a callback. The entries must be taken while the drop event runs;
//! the walk itself is asynchronous.

use std::future::Future;
use std::pin::Pin;

use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DataTransfer, File, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry};

/// Calls `done` with the dropped files and, for each dropped folder, the snapshots in it and
/// its subfolders (`folder_files`); `folder` says whether any folder was dropped.
pub fn dropped_files(data: &DataTransfer, done: impl FnOnce(Vec<File>, bool) + 'static) {
    let items = data.items();
    let entries: Vec<FileSystemEntry> = (0..items.length())
        .filter_map(|i| items.get(i))
        .filter(|item| item.kind() == "file")
        .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
        .collect();
    if !entries.iter().any(|e| e.is_directory()) {
        // Plain files: no walk needed.
        return done(crate::dom::file_list(data.files()), false);
    }
    wasm_bindgen_futures::spawn_local(async move {
        let mut files = Vec::new();
        for entry in entries {
            if let Err(e) = walk(entry, &mut files).await {
                web_sys::console::error_2(&"memsnap: reading a dropped folder".into(), &e);
            }
        }
        done(files, true);
    });
}

/// Appends `entry`'s file, or every file under it.
fn walk<'a>(
    entry: FileSystemEntry,
    out: &'a mut Vec<File>,
) -> Pin<Box<dyn Future<Output = Result<(), JsValue>> + 'a>> {
    Box::pin(async move {
        if entry.is_file() {
            let entry: FileSystemFileEntry = entry.unchecked_into();
            let promise = Promise::new(&mut |resolve, reject| {
                entry.file_with_callback_and_callback(&resolve, &reject);
            });
            out.push(JsFuture::from(promise).await?.dyn_into()?);
        } else if entry.is_directory() {
            let dir: FileSystemDirectoryEntry = entry.unchecked_into();
            let reader = dir.create_reader();
            loop {
                let promise = Promise::new(&mut |resolve, reject| {
                    if let Err(e) =
                        reader.read_entries_with_callback_and_callback(&resolve, &reject)
                    {
                        let _ = reject.call1(&JsValue::NULL, &e);
                    }
                });
                let batch: Array = JsFuture::from(promise).await?.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                for e in batch.iter() {
                    walk(e.unchecked_into(), out).await?;
                }
            }
        }
        Ok(())
    })
}
