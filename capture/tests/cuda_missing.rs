//! `--cuda` where there is no driver (this test's machines): one clear line, non-zero exit.
//! On a machine with a driver the first test checks a missing device instead.

mod common;

use memsnap_capture::cuda::driver::driver_present;

#[test]
fn cuda_without_driver_or_device_is_one_clear_line() {
    let dir = common::temp_dir("cuda-missing");
    let out = dir.join("x.pickle");
    let args: &[&str] = if driver_present() {
        &["--cuda", "--device", "999", "--scenario", "churn", "-o"]
    } else {
        &["--cuda", "--scenario", "churn", "-o"]
    };
    let mut args = args.to_vec();
    args.push(out.to_str().unwrap());
    let o = common::capture(&args);
    assert!(!o.status.success());
    let err = common::stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {err:?}");
    if driver_present() {
        assert!(
            lines[0].starts_with("capture: --cuda: device 999 not present (")
                || lines[0].starts_with("capture: --cuda: no usable CUDA driver"),
            "{err}"
        );
    } else {
        assert_eq!(
            lines[0],
            "capture: --cuda: no CUDA driver found (libcuda.so could not be loaded)"
        );
    }
    assert!(!out.exists(), "no snapshot is written");
}
