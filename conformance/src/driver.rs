//! How a case's machines are driven: a [`Driver`] drives one machine to its end (recording,
//! replaying or injecting faults) and an operation's [`Outcome`] is what is compared with
//! `expected/`; helpers shared by the operations.

use std::future::Future;

use paimon_kernel::io::Machine;
use paimon_kernel::{Error, Result};
use serde::Serialize;
use serde_json::Value;

/// The result of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Canonical JSON view (`expected/result.json`): pretty-printed, ending in a newline.
    pub json: String,
    /// Arrow IPC stream of the rows (`expected/result.arrows`), for scans.
    pub arrow: Option<Vec<u8>>,
}

/// Drives one machine to its end and returns what it emitted, in order. Implemented by the
/// recording host (answers from a real store and records), the replayer (answers from a
/// transcript) and the fault-injecting host.
pub trait Driver {
    /// Drive `machine`, the next machine of the operation, labelled `label`.
    ///
    /// # Errors
    /// The machine's error, or the driver's own (IO drift in replay, as
    /// [`Error::Protocol`]).
    fn drive<T: Send + 'static>(
        &mut self,
        label: &str,
        machine: Machine<T>,
    ) -> impl Future<Output = Result<Vec<T>>>;
}

/// The only item of `items`.
///
/// # Errors
/// [`Error::Protocol`] naming `label` when there is not exactly one.
pub(crate) fn one<T>(mut items: Vec<T>, label: &str) -> Result<T> {
    match (items.pop(), items.is_empty()) {
        (Some(item), true) => Ok(item),
        _ => Err(Error::Protocol {
            detail: format!("{label}: expected exactly one result"),
        }),
    }
}

pub(crate) fn pretty(value: &Value) -> Result<String> {
    let mut s = serde_json::to_string_pretty(value)
        .map_err(|e| Error::invalid(format!("cannot render the result: {e}")))?;
    s.push('\n');
    Ok(s)
}

pub(crate) fn to_value<S: Serialize>(v: &S) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::invalid(format!("cannot render the result: {e}")))
}

/// Poll a future that never waits (every [`Driver`] of this crate answers synchronously) to
/// its end with a no-op waker.
///
/// # Errors
/// [`Error::Protocol`] if the future is still pending after polling (a driver that waits).
pub fn block_on_ready<F: Future>(fut: F) -> Result<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Ok(v),
        std::task::Poll::Pending => Err(Error::Protocol {
            detail: "a synchronous driver suspended".to_string(),
        }),
    }
}
