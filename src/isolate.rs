//! Running work on behalf of agents and model servers so that it cannot
//! end the process: a panic becomes an error value (and is not printed
//! over the console, nor does it make the console give the terminal back),
//! and work whose depth follows its input runs on a thread with a large
//! stack, after its input was bounded.

use std::any::Any;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;

thread_local! {
    static CONTAINED: Cell<bool> = const { Cell::new(false) };
}

/// True while the current thread runs inside [`contain`]. Panic hooks use
/// it to stay quiet: the panic is about to become an error value.
pub fn is_contained() -> bool {
    CONTAINED.with(Cell::get)
}

/// The message a panic carried.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "an unknown panic".to_string())
}

/// Runs `f`, turning a panic into `Err(message)`.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = CONTAINED.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(was));
    result.map_err(|payload| panic_message(payload.as_ref()))
}

/// A stack large enough for recursion over bounded input (calculations,
/// HTML documents): 256 MiB of address space, touched only as deep as the
/// work goes.
pub const BIG_STACK: usize = 256 * 1024 * 1024;

/// Runs `f` on a fresh `stack`-byte stack of the current thread (mapped
/// for the call and unmapped after; no thread is started), contained.
pub fn on_big_stack<T: Send>(stack: usize, f: impl FnOnce() -> T + Send) -> Result<T, String> {
    stacker::grow(stack, || contain(f))
}

static BACKGROUND_PANICS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Keeps the message of a panic in a background task, for the console to
/// show (at most the last 16 are kept).
pub fn note_background_panic(message: String) {
    let mut panics = BACKGROUND_PANICS.lock().unwrap_or_else(|e| e.into_inner());
    if panics.len() >= 16 {
        panics.remove(0);
    }
    panics.push(message);
}

/// Takes the background panics noted since the last call.
pub fn take_background_panics() -> Vec<String> {
    std::mem::take(&mut *BACKGROUND_PANICS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Installs a process-wide panic hook that stays silent for contained
/// panics and otherwise does what the previous hook did.
pub fn install_quiet_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_contained() {
            previous(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error() {
        install_quiet_hook();
        let result: Result<(), String> = contain(|| panic!("boom {}", 1));
        assert_eq!(result, Err("boom 1".to_string()));
        assert!(!is_contained());
        assert_eq!(contain(|| 2 + 2), Ok(4));
    }

    #[test]
    fn deep_recursion_fits_the_big_stack() {
        fn depth(n: u64) -> u64 {
            if n == 0 {
                0
            } else {
                1 + std::hint::black_box(depth(n - 1))
            }
        }
        assert_eq!(on_big_stack(BIG_STACK, || depth(200_000)), Ok(200_000));
    }
}
