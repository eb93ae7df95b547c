//! Runs network work from synchronous code — a verb's handler runs on a
//! blocking thread, or in a command-line process with no runtime at all —
//! on a small runtime of partner's own, and waits for it, unless it is
//! cancelled first: then the work is dropped, which closes its connections.

use std::future::Future;
use std::sync::OnceLock;

use super::{Cancel, cancelled};

/// Why network work did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Interrupted {
    /// It was cancelled (the agent was halted).
    #[error("it was stopped: the agent was halted")]
    Cancelled,
    /// The network runtime could not start, or stopped.
    #[error("partner's network runtime is not available: {0}")]
    NoRuntime(String),
}

/// partner's network runtime: one worker thread, started on first use.
fn runtime() -> Result<&'static tokio::runtime::Runtime, Interrupted> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("partner-net")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Interrupted::NoRuntime(e.clone()))
}

/// Runs `work` to its end and returns its output, blocking this thread
/// meanwhile; when `cancel` turns true first, drops it and returns
/// [`Interrupted::Cancelled`]. Never call it from async code (it blocks).
pub fn run<T: Send + 'static>(
    work: impl Future<Output = T> + Send + 'static,
    cancel: Option<Cancel>,
) -> Result<T, Interrupted> {
    let runtime = runtime()?;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        let outcome = match cancel {
            Some(cancel) if *cancel.borrow() => Err(Interrupted::Cancelled),
            Some(mut cancel) => tokio::select! {
                output = work => Ok(output),
                () = cancelled(&mut cancel) => Err(Interrupted::Cancelled),
            },
            None => Ok(work.await),
        };
        let _ = tx.send(outcome);
    });
    rx.recv()
        .map_err(|_| Interrupted::NoRuntime("the work was lost".into()))?
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn work_runs_and_cancelling_drops_it_at_once() {
        assert_eq!(run(async { 2 + 2 }, None), Ok(4));
        let (stop, cancel) = tokio::sync::watch::channel(false);
        let started = Instant::now();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let _ = stop.send(true);
        });
        let outcome = run(
            async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "slept"
            },
            Some(cancel),
        );
        stopper.join().unwrap();
        assert_eq!(outcome, Err(Interrupted::Cancelled));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
