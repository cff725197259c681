//! `memsnap._memsnap`: the extension module under the `memsnap` Python package
//! (python/memsnap/__init__.py). Thin over the CLI: each analysis is the command line's own
//! function over a snapshot read once ([`render_loaded`]), so the module's data equals the
//! command's `--json` field for field; the package turns that JSON into Python objects.
//! Every error is a `ValueError` carrying the CLI's one line (the file or key, and what is
//! wrong); nothing in a snapshot is executed (core's pickle reader builds values, never
//! objects).

use memsnap_capture::memsnap_cli::{
    bytes, export, fleet, html, parse, parse_command, render_loaded, CliError, Command,
};
use memsnap_core::snapshot::Snapshot;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn value_error(e: CliError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A snapshot read into memsnap's model. Made by `memsnap.load`.
#[pyclass(name = "Snapshot", module = "memsnap._memsnap", frozen)]
struct PySnapshot {
    snap: Snapshot,
    /// What outputs call the file: its path as given, or `<bytes>` / `<dict>`.
    name: String,
}

#[pymethods]
impl PySnapshot {
    /// The name outputs quote for this snapshot.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Devices of the file (segment `device` keys and trace indices).
    fn devices(&self) -> Vec<i64> {
        self.snap.devices()
    }

    /// The text `memsnap ARGS...` prints, ARGS naming this snapshot where a FILE goes.
    fn run(&self, py: Python<'_>, args: Vec<String>) -> PyResult<String> {
        py.detach(|| render_loaded(&args, &[&self.snap]))
            .map_err(value_error)
    }

    /// The text `memsnap compare ARGS...` prints, this snapshot BEFORE and `after` AFTER.
    fn run_pair(&self, py: Python<'_>, after: &PySnapshot, args: Vec<String>) -> PyResult<String> {
        py.detach(|| render_loaded(&args, &[&self.snap, &after.snap]))
            .map_err(value_error)
    }

    /// The snapshot as a protocol-4 pickle (what `memsnap convert` writes).
    fn to_pickle<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let out = py.detach(|| memsnap_core::snapshot::write(&self.snap));
        PyBytes::new(py, &out)
    }

    fn __repr__(&self) -> String {
        format!(
            "<memsnap.Snapshot {} ({} segments, {} devices)>",
            self.name,
            self.snap.segments.len(),
            self.snap.devices().len()
        )
    }
}

/// Reads a snapshot from the bytes of a file (pickle, gzipped pickle or JSON).
#[pyfunction]
fn read_bytes(py: Python<'_>, data: &[u8], name: String) -> PyResult<PySnapshot> {
    let snap = py
        .detach(|| parse(&name, data, false))
        .map_err(value_error)?;
    Ok(PySnapshot { snap, name })
}

/// Reads the snapshot file at `path` (the CLI's reader: the same size limit and messages);
/// outputs quote it as `name`, else as `path`.
#[pyfunction]
#[pyo3(signature = (path, name=None))]
fn read_path(py: Python<'_>, path: String, name: Option<String>) -> PyResult<PySnapshot> {
    let snap = py
        .detach(|| bytes(&path).and_then(|data| parse(&path, &data, false)))
        .map_err(value_error)?;
    let name = name.unwrap_or(path);
    Ok(PySnapshot { snap, name })
}

/// `memsnap fleet ARGS...`'s text; a file that could not be read is an error.
#[pyfunction]
fn fleet_text(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    let Command::Fleet(a) = command("fleet", args)? else {
        unreachable!("parsed as fleet")
    };
    let (text, failed) = py.detach(|| fleet::render(&a)).map_err(value_error)?;
    failed.map_or(Ok(text), |e| Err(value_error(e)))
}

/// Runs `memsnap export ARGS...` (it prints nothing with `--quiet`).
#[pyfunction]
fn export_parquet(py: Python<'_>, args: Vec<String>) -> PyResult<()> {
    let Command::Export(a) = command("export", args)? else {
        unreachable!("parsed as export")
    };
    py.detach(|| export::run(a)).map_err(value_error)
}

/// The report `memsnap html ARGS...` writes, for the file bytes `data` (its FILE argument
/// names them), with the line the command prints.
#[pyfunction]
fn html_report(py: Python<'_>, args: Vec<String>, data: &[u8]) -> PyResult<(String, String)> {
    let Command::Html(a) = command("html", args)? else {
        unreachable!("parsed as html")
    };
    py.detach(|| html::render(&a, data)).map_err(value_error)
}

/// `memsnap NAME ARGS...` parsed.
fn command(name: &str, args: Vec<String>) -> PyResult<Command> {
    let argv: Vec<String> = std::iter::once(name.to_string()).chain(args).collect();
    parse_command(&argv).map_err(value_error)
}

/// The `memsnap` command (`argv[0]` the program's name); returns its exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| memsnap_capture::memsnap_cli::main_from(argv))
}

#[pymodule]
fn _memsnap(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySnapshot>()?;
    m.add_function(wrap_pyfunction!(read_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(read_path, m)?)?;
    m.add_function(wrap_pyfunction!(fleet_text, m)?)?;
    m.add_function(wrap_pyfunction!(export_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(html_report, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
