//! Blocking work from async code: on a thread of its own that ends with the work, or,
//! when the system will not give a thread, on the caller.
//!
//! tokio's `spawn_blocking` keeps its threads waiting for more work (10 s by default),
//! and panics when it has none and cannot make one. A server that serves on one thread
//! should stay the process's only thread between such jobs: while another lives, Linux
//! shares the file table, and every system call of the serving thread takes and drops a
//! reference on its socket's file (~60 ns of a request, measured with `perf record`). The periodic jobs
//! (the usage file, the credit journal's flush, the heap's trim, a reload's last step)
//! come at most about once a second, so a thread a job costs tens of microseconds a
//! second; and a job that cannot have a thread still runs, late and in the caller's
//! way, instead of taking the task that asked for it down with a panic.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

/// Runs `job` on a new thread and waits for it without blocking the runtime; runs it
/// here when no thread can be made. `Err` holds the payload of a panic in `job`.
pub async fn run<R, F>(job: F) -> Result<R, Box<dyn Any + Send>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    run_with(job, |work| {
        std::thread::Builder::new()
            .name("tldsnap-blocking".into())
            .spawn(work)
            .map(drop)
    })
    .await
}

/// [`run`] with the thread made by `spawn` (tests refuse it).
async fn run_with<R, F>(
    job: F,
    spawn: impl FnOnce(Box<dyn FnOnce() + Send>) -> std::io::Result<()>,
) -> Result<R, Box<dyn Any + Send>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    // Shared so that the job is still here to run when the thread is refused (a refused
    // spawn drops what it was given).
    let job = Arc::new(Mutex::new(Some(job)));
    let take = |job: &Mutex<Option<F>>| job.lock().unwrap_or_else(PoisonError::into_inner).take();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let theirs = Arc::clone(&job);
    let spawned = spawn(Box::new(move || {
        if let Some(job) = take(&theirs) {
            let _ = tx.send(std::panic::catch_unwind(AssertUnwindSafe(job)));
        }
    }));
    match spawned {
        // The thread took the job (no one else can) and sends before it ends.
        Ok(()) => rx
            .await
            .unwrap_or_else(|_| Err(Box::new("the blocking thread ended without an answer"))),
        Err(_) => match take(&job) {
            Some(job) => std::panic::catch_unwind(AssertUnwindSafe(job)),
            None => Err(Box::new("the refused thread took the job")),
        },
    }
}

/// What a panic's payload says, for a log line or an error (`panic!` with a literal or
/// a format gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(s), _) => s,
        (None, Some(s)) => s,
        (None, None) => "a panic without a message",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn runs_on_a_thread_of_its_own_that_ends_with_it() {
        let here = std::thread::current().id();
        let (id, name) = run(|| {
            let t = std::thread::current();
            (t.id(), t.name().map(str::to_owned))
        })
        .await
        .unwrap();
        assert_ne!(id, here);
        assert_eq!(name.as_deref(), Some("tldsnap-blocking"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_comes_back_as_its_payload() {
        let payload = run(|| -> u8 { panic!("boom") }).await.unwrap_err();
        assert_eq!(panic_message(&*payload), "boom");
        let payload = run(|| -> u8 { panic!("boom {}", 2) }).await.unwrap_err();
        assert_eq!(panic_message(&*payload), "boom 2");
        // The same on the caller, when no thread is had.
        let refuse = |_: Box<dyn FnOnce() + Send>| Err(std::io::Error::other("no threads"));
        let payload = run_with(|| -> u8 { panic!("boom") }, refuse)
            .await
            .unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn without_a_thread_the_job_runs_on_the_caller() {
        let here = std::thread::current().id();
        let refuse = |_: Box<dyn FnOnce() + Send>| Err(std::io::Error::other("no threads"));
        let ran_on = run_with(|| std::thread::current().id(), refuse)
            .await
            .unwrap();
        assert_eq!(ran_on, here);
    }
}
