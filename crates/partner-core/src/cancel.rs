//! Stopping work on request: the signal a halt sends to whatever runs on
//! an agent's behalf (a model call, a fetch, a shell command).

/// A signal that stops work when it turns true (the agent was halted).
pub type Cancel = tokio::sync::watch::Receiver<bool>;

/// Resolves when `cancel` turns true; never, if nobody can send it any more.
pub async fn cancelled(cancel: &mut Cancel) {
    if cancel.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}
