//! `memsnap.show` in a notebook executed headless (nbclient, tests/py/run_notebook.py) with
//! the installed wheel: its output, put in a page as a notebook front end puts it, opens in
//! Chromium with the network off and the viewer inside it shows core's figures for the file.
//! Needs `MEMSNAP_VENV_PYTHON`: the interpreter of a venv holding the wheel (scripts/test.sh
//! builds and installs it); without it the test says so and does nothing.

use std::process::Command;

use memsnap_tests::fixtures::{scratch, workspace_root};
use memsnap_tests::python::script;
use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::page;
use memsnap_tests::web::report;

#[tokio::test(flavor = "current_thread")]
async fn show_displays_the_viewer_offline() {
    let Some(python) = std::env::var_os("MEMSNAP_VENV_PYTHON") else {
        eprintln!(
            "WARNING: MEMSNAP_VENV_PYTHON unset (no venv with the memsnap wheel): skipping the \
             notebook test; scripts/test.sh builds the wheel and sets it"
        );
        return;
    };
    let example = workspace_root().join("app/assets/example.pickle");
    let dir = scratch("page-notebook");
    let out = dir.join("notebook-output.html");
    let run = Command::new(&python)
        .arg(script("run_notebook.py"))
        .arg(&example)
        .arg(&out)
        .arg(dir.join("executed.ipynb"))
        .output()
        .expect("running the notebook");
    assert!(
        run.status.success(),
        "the notebook failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );

    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;
    report::network_off(c).await;
    let url = format!("file://{}", out.display());
    c.goto(&url).await.expect("opening the notebook's output");
    let frame = page::find_css(c, "iframe").await;
    frame
        .enter_frame()
        .await
        .expect("entering the viewer's iframe");
    // `show` names the file as its path was given: the report quotes its base name.
    report::wait_opened(c, "example.pickle", &example).await;
    report::assert_loaded_nothing_outside(c, "the notebook's viewer", "about:srcdoc").await;
    c.enter_parent_frame().await.expect("back to the page");
    page::screenshot(c, "notebook-show").await;
    browser.close().await;
}
