//! The allocator model's [`Backing`] on a real GPU: segments from cuMemAlloc, expandable
//! segments from cuMemAddressReserve + cuMemCreate + cuMemMap/cuMemSetAccess, real streams and
//! events, and every handed-out block written with cuMemsetD8Async on its stream so that the
//! device really uses the memory. Addresses in the snapshot are the device's.

use std::collections::{BTreeMap, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};

use cudarc::driver::sys::{self, CUresult};
use memsnap_core::allocator::{Backing, EventId, StreamId};

use super::driver::{check, describe, CudaError, Device};

/// PyTorch's page size for the small pool and the usual granularity of current GPUs.
const FALLBACK_GRANULARITY: u64 = 2 << 20;

pub struct CudaBacking {
    dev: Device,
    /// cuMemCreate granularity: physical pages are created per granule so that any granule-
    /// aligned part of a mapping can be unmapped on its own (as PyTorch creates one handle
    /// per 2 MiB / 20 MiB page).
    granularity: u64,
    /// Physical handle of each mapped granule, by address.
    pages: BTreeMap<u64, sys::CUmemGenericAllocationHandle>,
    events: HashMap<u64, sys::CUevent>,
    next_event: u64,
    streams: Vec<sys::CUstream>,
    /// The first failure other than out-of-memory. The Backing calls cannot return errors,
    /// so the run checks this after each step and stops.
    error: Option<CudaError>,
}

impl CudaBacking {
    pub fn new(dev: Device) -> Result<CudaBacking, CudaError> {
        let prop = alloc_prop(dev.ordinal);
        let mut g = 0usize;
        // SAFETY: valid out-pointer and property struct; the context is current (Device).
        let r = unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut g,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        };
        // Devices without virtual memory management still run non-expandable scenarios; the
        // first cuMemCreate then reports the problem.
        if r != CUresult::CUDA_SUCCESS {
            g = FALLBACK_GRANULARITY as usize;
        }
        Ok(CudaBacking {
            dev,
            granularity: g.max(1) as u64,
            pages: BTreeMap::new(),
            events: HashMap::new(),
            next_event: 1,
            streams: Vec::new(),
            error: None,
        })
    }

    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// A new non-blocking stream; its id in the trace is the raw CUstream.
    pub fn create_stream(&mut self) -> Result<StreamId, CudaError> {
        let mut s = std::ptr::null_mut();
        // SAFETY: valid out-pointer; context current.
        check("cuStreamCreate", unsafe {
            sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
        })?;
        self.streams.push(s);
        Ok(s as StreamId)
    }

    /// The first driver failure seen, if any (cleared).
    pub fn take_error(&mut self) -> Option<CudaError> {
        self.error.take()
    }

    /// Waits for all work (the memsets) and reports any failure it raised.
    pub fn synchronize(&mut self) -> Result<(), CudaError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // SAFETY: context current.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
    }

    fn fail(&mut self, call: &'static str, r: CUresult) {
        if self.error.is_none() {
            self.error = Some(CudaError::Call {
                call,
                error: describe(r),
            });
        }
    }

    fn ok(&mut self, call: &'static str, r: CUresult) -> bool {
        if r == CUresult::CUDA_SUCCESS {
            true
        } else {
            self.fail(call, r);
            false
        }
    }

    fn unmap_pages(&mut self, addr: u64, size: u64) {
        let end = addr + size;
        let mapped: Vec<(u64, sys::CUmemGenericAllocationHandle)> =
            self.pages.range(addr..end).map(|(a, h)| (*a, *h)).collect();
        for (a, h) in mapped {
            // SAFETY: `a` is a granule this backing mapped and has not unmapped.
            let r = unsafe { sys::cuMemUnmap(a, self.granularity as usize) };
            self.ok("cuMemUnmap", r);
            // SAFETY: the handle came from cuMemCreate and is released once.
            let r = unsafe { sys::cuMemRelease(h) };
            self.ok("cuMemRelease", r);
            self.pages.remove(&a);
        }
    }
}

fn alloc_prop(ordinal: i32) -> sys::CUmemAllocationProp {
    // SAFETY: a plain C struct for which all-zero is a valid value.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal;
    prop
}

impl Backing for CudaBacking {
    fn malloc(&mut self, size: u64, _stream: StreamId) -> Option<u64> {
        let mut p = 0;
        // SAFETY: valid out-pointer; context current.
        let r = unsafe { sys::cuMemAlloc_v2(&mut p, size as usize) };
        match r {
            CUresult::CUDA_SUCCESS => Some(p),
            CUresult::CUDA_ERROR_OUT_OF_MEMORY => None,
            other => {
                self.fail("cuMemAlloc", other);
                None
            }
        }
    }

    fn free(&mut self, addr: u64, _size: u64) {
        // SAFETY: `addr` came from cuMemAlloc (the model frees only what `malloc` gave).
        let r = unsafe { sys::cuMemFree_v2(addr) };
        self.ok("cuMemFree", r);
    }

    fn reserve_virtual(&mut self, size: u64, _stream: StreamId) -> Option<u64> {
        let size = size.div_ceil(self.granularity) * self.granularity;
        let mut p = 0;
        // SAFETY: valid out-pointer; no fixed address requested.
        let r = unsafe { sys::cuMemAddressReserve(&mut p, size as usize, 0, 0, 0) };
        match r {
            CUresult::CUDA_SUCCESS => Some(p),
            CUresult::CUDA_ERROR_OUT_OF_MEMORY => None,
            other => {
                self.fail("cuMemAddressReserve", other);
                None
            }
        }
    }

    fn map(&mut self, addr: u64, size: u64) -> bool {
        let g = self.granularity;
        let prop = alloc_prop(self.dev.ordinal);
        let access = sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        let end = (addr + size).div_ceil(g) * g;
        // Granules this call maps: undone (and only they) if a later one fails, so that a
        // failed map leaves nothing new mapped, as in PyTorch.
        let mut mapped_now: Vec<u64> = Vec::new();
        let mut a = addr / g * g;
        let mut ok = true;
        while a < end {
            if self.pages.contains_key(&a) {
                a += g;
                continue;
            }
            let mut h = 0;
            // SAFETY: valid out-pointer and property struct.
            let r = unsafe { sys::cuMemCreate(&mut h, g as usize, &prop, 0) };
            if r != CUresult::CUDA_SUCCESS {
                if r != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                    self.fail("cuMemCreate", r);
                }
                ok = false;
                break;
            }
            // SAFETY: `a` lies in a range reserved by `reserve_virtual`, not mapped yet.
            let r = unsafe { sys::cuMemMap(a, g as usize, 0, h, 0) };
            if !self.ok("cuMemMap", r) {
                // SAFETY: the handle is ours and unused.
                unsafe { sys::cuMemRelease(h) };
                ok = false;
                break;
            }
            self.pages.insert(a, h);
            mapped_now.push(a);
            // SAFETY: the granule was just mapped.
            let r = unsafe { sys::cuMemSetAccess(a, g as usize, &access, 1) };
            if !self.ok("cuMemSetAccess", r) {
                ok = false;
                break;
            }
            a += g;
        }
        if !ok {
            for p in mapped_now {
                self.unmap_pages(p, g);
            }
        }
        ok
    }

    fn unmap(&mut self, addr: u64, size: u64) {
        // PyTorch synchronizes before unmapping: the pages may still be in use by kernels.
        // SAFETY: context current.
        let r = unsafe { sys::cuCtxSynchronize() };
        self.ok("cuCtxSynchronize", r);
        self.unmap_pages(addr, size);
    }

    fn release_virtual(&mut self, addr: u64, size: u64) {
        let size = size.div_ceil(self.granularity) * self.granularity;
        self.unmap_pages(addr, size);
        // SAFETY: the range came from cuMemAddressReserve with this (rounded) size.
        let r = unsafe { sys::cuMemAddressFree(addr, size as usize) };
        self.ok("cuMemAddressFree", r);
    }

    fn record_event(&mut self, stream: StreamId) -> EventId {
        let id = self.next_event;
        self.next_event += 1;
        let mut ev = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `stream` is 0 or a stream this backing created.
        unsafe {
            let r = sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32);
            if self.ok("cuEventCreate", r) {
                let r = sys::cuEventRecord(ev, stream as sys::CUstream);
                if self.ok("cuEventRecord", r) {
                    self.events.insert(id, ev);
                }
            }
        }
        EventId(id)
    }

    fn event_done(&mut self, event: EventId) -> bool {
        let Some(&ev) = self.events.get(&event.0) else {
            return true;
        };
        // SAFETY: `ev` is a live event of this backing.
        let r = unsafe { sys::cuEventQuery(ev) };
        match r {
            CUresult::CUDA_SUCCESS => {
                self.events.remove(&event.0);
                // SAFETY: done with it; destroyed once.
                unsafe { sys::cuEventDestroy_v2(ev) };
                true
            }
            CUresult::CUDA_ERROR_NOT_READY => false,
            other => {
                self.fail("cuEventQuery", other);
                true
            }
        }
    }

    fn synchronize_event(&mut self, event: EventId) {
        if let Some(ev) = self.events.remove(&event.0) {
            // SAFETY: `ev` is a live event of this backing; destroyed once.
            unsafe {
                let r = sys::cuEventSynchronize(ev);
                self.ok("cuEventSynchronize", r);
                sys::cuEventDestroy_v2(ev);
            }
        }
    }

    fn mem_info(&self) -> (u64, u64) {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers; context current.
        let r = unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) };
        if r == CUresult::CUDA_SUCCESS {
            (free as u64, total as u64)
        } else {
            (0, self.dev.total_mem)
        }
    }

    fn now_us(&mut self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0)
    }

    fn touch(&mut self, addr: u64, size: u64, stream: StreamId) {
        // SAFETY: [addr, addr+size) is a block the model just handed out, inside a segment
        // or mapped range this backing created; `stream` is 0 or one of ours.
        let r = unsafe { sys::cuMemsetD8Async(addr, 0, size as usize, stream as sys::CUstream) };
        self.ok("cuMemsetD8Async", r);
    }
}

impl Drop for CudaBacking {
    fn drop(&mut self) {
        // SAFETY: all handles are ours; teardown order: wait, then events, streams.
        unsafe {
            sys::cuCtxSynchronize();
            for (_, ev) in self.events.drain() {
                sys::cuEventDestroy_v2(ev);
            }
            for s in self.streams.drain(..) {
                sys::cuStreamDestroy_v2(s);
            }
        }
    }
}
