//! Software prefetch hints: the event loop asks the cache for the memory the *next* event will
//! touch (a packet, a connection, a client) while it handles the current one, so that with
//! thousands of clients the first touch of per-client state is not a full cache miss. Hints
//! only: they change no value and no order, and they are no-ops on targets without one.

/// Bytes per cache line on the targets the hints are issued for.
const LINE: usize = 64;

/// Hints that the cache lines of `bytes` bytes from `p` will be read soon.
#[inline(always)]
pub fn prefetch_bytes<T>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let start = p as usize & !(LINE - 1);
        let end = p as usize + bytes.max(1);
        let mut line = start;
        while line < end {
            // SAFETY: a prefetch is a hint; it never faults, whatever the address.
            #[allow(unused_unsafe)]
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    line as *const i8,
                );
            }
            line += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, bytes, LINE);
    }
}

/// Hints that `*r` will be read soon (every cache line of it).
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_bytes(r as *const T, std::mem::size_of::<T>());
}
