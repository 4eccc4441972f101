//! Ctrl-C and SIGTERM, watched once for the whole process: the first one latches a flag that
//! every `interrupted()` sees, also one created after the signal arrived (between two phases).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use tokio::sync::watch;

/// Set by the first Ctrl-C or SIGTERM; never cleared.
static LATCHED: AtomicBool = AtomicBool::new(false);

/// The watch the listener task fills, one per runtime (a new runtime starts a new listener).
static WATCH: Mutex<Option<watch::Receiver<bool>>> = Mutex::new(None);

/// Whether Ctrl-C or SIGTERM has arrived.
pub fn is_interrupted() -> bool {
    LATCHED.load(Ordering::SeqCst)
}

/// Resolves once Ctrl-C or SIGTERM has arrived (at once if one already has). The listener is
/// started on first use in a runtime and lives as long as the runtime.
pub async fn interrupted() {
    if is_interrupted() {
        return;
    }
    let mut rx = listener();
    if rx.wait_for(|fired| *fired).await.is_err() {
        // The runtime that listened is shutting down: nothing will come.
        std::future::pending::<()>().await;
    }
}

/// A receiver of the current runtime's listener, starting one when none is alive.
fn listener() -> watch::Receiver<bool> {
    let mut slot = WATCH.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(rx) = slot.as_ref().filter(|rx| rx.has_changed().is_ok()) {
        return rx.clone();
    }
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        tokio::select! {
            _ = os_signal() => {
                LATCHED.store(true, Ordering::SeqCst);
                let _ = tx.send(true);
            }
            _ = tx.closed() => {}
        }
    });
    *slot = Some(rx.clone());
    rx
}

async fn os_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Start watching Ctrl-C and SIGTERM now (within a runtime), so that one arriving before the
/// first `interrupted()` is awaited is latched rather than killing the process.
pub fn watch() {
    let _ = listener();
}
