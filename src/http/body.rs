//! The response body: one chunk, either shared bytes (static or reference-counted) or a
//! buffer the query layer just wrote, handed to hyper as it is.
//!
//! `http_body_util::Full<Bytes>` would do, but turning the query's `Vec<u8>` into
//! `Bytes` allocates a second block (the shared header that `Bytes` keeps for a vector
//! with spare capacity) on every request and frees it after the write. [`Body`] keeps
//! the vector and frees it once, when hyper has written it.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use hyper::body::{Frame, SizeHint};

/// A complete response body, sent as one data frame.
#[derive(Debug, Default)]
pub struct Body(Option<Chunk>);

/// The bytes of a [`Body`].
#[derive(Debug)]
pub enum Chunk {
    /// Static or shared bytes.
    Shared(Bytes),
    /// A buffer owned by the response; `pos` bytes of it are already written.
    Owned {
        /// The bytes.
        buf: Vec<u8>,
        /// How many of them have been consumed.
        pos: usize,
    },
}

impl Body {
    /// The bytes, as a slice (empty once hyper has taken them).
    pub fn bytes(&self) -> &[u8] {
        self.0.as_ref().map_or(&[], |c| c.chunk())
    }
}

impl From<Vec<u8>> for Body {
    fn from(buf: Vec<u8>) -> Body {
        Body(Some(Chunk::Owned { buf, pos: 0 }))
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Body {
        Body(Some(Chunk::Shared(bytes)))
    }
}

impl From<&'static [u8]> for Body {
    fn from(bytes: &'static [u8]) -> Body {
        Body(Some(Chunk::Shared(Bytes::from_static(bytes))))
    }
}

impl Buf for Chunk {
    fn remaining(&self) -> usize {
        match self {
            Chunk::Shared(b) => b.len(),
            Chunk::Owned { buf, pos } => buf.len() - pos,
        }
    }

    fn chunk(&self) -> &[u8] {
        match self {
            Chunk::Shared(b) => b,
            Chunk::Owned { buf, pos } => &buf[*pos..],
        }
    }

    fn advance(&mut self, cnt: usize) {
        match self {
            Chunk::Shared(b) => b.advance(cnt),
            Chunk::Owned { buf, pos } => {
                assert!(cnt <= buf.len() - *pos, "advance past the end of the body");
                *pos += cnt;
            }
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Chunk;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, Infallible>>> {
        Poll::Ready(self.0.take().map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.as_ref().is_none_or(|c| c.remaining() == 0)
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.as_ref().map_or(0, |c| c.remaining() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn sends_its_bytes_once_whatever_they_are_made_of() {
        for (body, want) in [
            (Body::from(b"static".as_slice()), &b"static"[..]),
            (Body::from(Bytes::from(vec![1, 2, 3])), &[1, 2, 3][..]),
            (Body::from(b"owned".to_vec()), &b"owned"[..]),
            (Body::from(Vec::with_capacity(64)), &b""[..]),
        ] {
            assert_eq!(body.bytes(), want);
            assert_eq!(
                hyper::body::Body::size_hint(&body).exact(),
                Some(want.len() as u64)
            );
            assert_eq!(hyper::body::Body::is_end_stream(&body), want.is_empty());
            let collected = body.collect().await.unwrap().to_bytes();
            assert_eq!(&collected[..], want);
        }
    }

    #[test]
    fn an_owned_chunk_advances_like_bytes() {
        let mut chunk = Chunk::Owned {
            buf: b"abcdef".to_vec(),
            pos: 0,
        };
        chunk.advance(2);
        assert_eq!(chunk.chunk(), b"cdef");
        assert_eq!(chunk.remaining(), 4);
        chunk.advance(4);
        assert_eq!(chunk.remaining(), 0);
    }
}
