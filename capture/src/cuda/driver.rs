//! Finding the driver and the device, and turning CUresult codes into errors.

use std::ffi::CStr;
use std::fmt;

use cudarc::driver::sys::{self, CUresult};

#[derive(Debug, Clone, PartialEq)]
pub enum CudaError {
    /// libcuda.so could not be loaded (no driver installed, or not on the library path).
    NoDriver,
    /// The driver loaded but does not work here (cuInit failed: no GPU, stub library, ...).
    InitFailed(String),
    /// `--device N` with fewer devices.
    NoDevice { ordinal: i32, count: i32 },
    /// A driver call failed.
    Call { call: &'static str, error: String },
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CudaError::NoDriver => {
                f.write_str("no CUDA driver found (libcuda.so could not be loaded)")
            }
            CudaError::InitFailed(e) => write!(f, "no usable CUDA driver (cuInit failed: {e})"),
            CudaError::NoDevice { ordinal, count } => {
                write!(f, "device {ordinal} not present ({count} devices)")
            }
            CudaError::Call { call, error } => write!(f, "{call} failed: {error}"),
        }
    }
}

impl std::error::Error for CudaError {}

/// The name and description of a CUresult, e.g. `CUDA_ERROR_OUT_OF_MEMORY (out of memory)`.
pub fn describe(r: CUresult) -> String {
    let mut msg: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: only called after the library is loaded (every caller holds a `Device`, or is
    // `open` after `is_culib_present`); the driver returns a static string or leaves null.
    let ok = unsafe { sys::cuGetErrorString(r, &mut msg) } == CUresult::CUDA_SUCCESS;
    if ok && !msg.is_null() {
        // SAFETY: the driver's strings are NUL-terminated and static.
        let s = unsafe { CStr::from_ptr(msg) }.to_string_lossy();
        format!("{r:?} ({s})")
    } else {
        format!("{r:?}")
    }
}

pub fn check(call: &'static str, r: CUresult) -> Result<(), CudaError> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Call {
            call,
            error: describe(r),
        })
    }
}

/// An initialised device with its primary context current on this thread.
#[derive(Debug, Clone, Copy)]
pub struct Device {
    pub ordinal: i32,
    pub handle: sys::CUdevice,
    pub ctx: sys::CUcontext,
    pub total_mem: u64,
}

/// Whether libcuda can be loaded. Checked before any other call because cudarc panics when a
/// driver function is used without the library.
pub fn driver_present() -> bool {
    // SAFETY: only tries dlopen on the candidate names; nothing is called.
    unsafe { sys::is_culib_present() }
}

/// Loads the driver, initialises it, and makes device `ordinal`'s primary context current.
pub fn open(ordinal: i32) -> Result<Device, CudaError> {
    if !driver_present() {
        return Err(CudaError::NoDriver);
    }
    // SAFETY: the library is present (checked above); each call gets valid out-pointers.
    unsafe {
        let r = sys::cuInit(0);
        if r != CUresult::CUDA_SUCCESS {
            if r == CUresult::CUDA_ERROR_NO_DEVICE {
                return Err(CudaError::NoDevice { ordinal, count: 0 });
            }
            return Err(CudaError::InitFailed(describe(r)));
        }
        let mut count = 0;
        check("cuDeviceGetCount", sys::cuDeviceGetCount(&mut count))?;
        if ordinal < 0 || ordinal >= count {
            return Err(CudaError::NoDevice { ordinal, count });
        }
        let mut handle = 0;
        check("cuDeviceGet", sys::cuDeviceGet(&mut handle, ordinal))?;
        let mut ctx = std::ptr::null_mut();
        check(
            "cuDevicePrimaryCtxRetain",
            sys::cuDevicePrimaryCtxRetain(&mut ctx, handle),
        )?;
        check("cuCtxSetCurrent", sys::cuCtxSetCurrent(ctx))?;
        let mut total = 0usize;
        check(
            "cuDeviceTotalMem",
            sys::cuDeviceTotalMem_v2(&mut total, handle),
        )?;
        Ok(Device {
            ordinal,
            handle,
            ctx,
            total_mem: total as u64,
        })
    }
}
