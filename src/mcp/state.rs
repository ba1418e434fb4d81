//! What the MCP endpoint keeps between requests, held in the server's state: its
//! sessions and the tool calls counted per tool.
//!
//! A file of its own, knowing only [`super::session`], so that the server's state can
//! hold it without depending on the endpoint that uses that state.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use super::session::Sessions;

/// Most tools counted: the tool table has fewer (a test of the table holds it there).
pub const MAX_TOOLS: usize = 32;

/// The MCP endpoint's sessions and counters.
#[derive(Debug)]
pub struct Mcp {
    /// The open sessions.
    pub sessions: Sessions,
    /// Tool calls per tool index, answered (`[i][0]`) and refused (`[i][1]`).
    calls: [[AtomicU64; 2]; MAX_TOOLS],
}

impl Default for Mcp {
    fn default() -> Mcp {
        Mcp {
            sessions: Sessions::default(),
            calls: std::array::from_fn(|_| Default::default()),
        }
    }
}

impl Mcp {
    /// Counts one call of tool `index`, answered or refused.
    pub fn count(&self, index: usize, ok: bool) {
        if let Some(c) = self.calls.get(index) {
            c[usize::from(!ok)].fetch_add(1, Relaxed);
        }
    }

    /// Calls of tool `index` so far, answered and refused.
    pub fn calls(&self, index: usize) -> (u64, u64) {
        self.calls
            .get(index)
            .map_or((0, 0), |c| (c[0].load(Relaxed), c[1].load(Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_tool_and_result() {
        let mcp = Mcp::default();
        mcp.count(3, true);
        mcp.count(3, true);
        mcp.count(3, false);
        mcp.count(MAX_TOOLS, true);
        assert_eq!(mcp.calls(3), (2, 1));
        assert_eq!(mcp.calls(0), (0, 0));
        assert_eq!(mcp.calls(MAX_TOOLS), (0, 0));
    }
}
