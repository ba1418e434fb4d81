//! The HTTP API on bare hyper. (Being written: see issue 4.)
