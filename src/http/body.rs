//! The response body: one chunk, either shared bytes (static or reference-counted) or a
//! buffer the query layer just wrote, handed to hyper as it is; or up to three chunks
//! (a kept answer with a fresh part at its end or in its middle, [`Body::pair`],
//! [`Body::spliced`]); or, for the one answer that is not complete when it starts (an
//! event stream), chunks from a channel.
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

/// A response body: complete, sent as one data frame (or up to three), or streamed
/// ([`Body::channel`]).
///
/// 56 bytes: a response is moved several times between the handler and hyper's write,
/// so what only spliced and streamed bodies need lives behind a box; and hyper asks
/// `is_end_stream` and `size_hint` of every answer, so those two are inlined.
#[derive(Debug, Default)]
pub struct Body {
    /// The first chunk, until hyper takes it (none for a stream).
    first: Option<Chunk>,
    /// What follows it.
    rest: Rest,
}

/// What follows the first chunk of a [`Body`].
#[derive(Debug, Default)]
enum Rest {
    /// Nothing: the body is its first chunk.
    #[default]
    None,
    /// One or two more chunks, sent in order ([`Body::pair`], [`Body::spliced`]).
    Chunks(Box<[Option<Chunk>; 2]>),
    /// Chunks as they come ([`Body::channel`]).
    Stream(Box<Streamed>),
}

/// The streamed part of a [`Body`]: chunks as they are produced, and whatever must live
/// exactly as long as the body ([`Body::with_guard`]).
struct Streamed {
    chunks: tokio::sync::mpsc::Receiver<Vec<u8>>,
    _guard: Option<Box<dyn Send + Sync>>,
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed").finish_non_exhaustive()
    }
}

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
    /// The bytes of the first chunk, as a slice (the whole body but for a pair or a
    /// spliced one; empty once hyper has taken them, and for a stream).
    pub fn bytes(&self) -> &[u8] {
        self.first.as_ref().map_or(&[], |c| c.chunk())
    }

    /// A body of two chunks sent one after the other: shared bytes, then a part of this
    /// request (a kept answer whose last part is written anew).
    pub fn pair(head: Bytes, rest: Chunk) -> Body {
        Body {
            first: Some(Chunk::Shared(head)),
            rest: Rest::Chunks(Box::new([Some(rest), None])),
        }
    }

    /// A body of three chunks sent one after the other: shared bytes, a part of this
    /// request, and more shared bytes. A kept answer with one part written anew is
    /// sent like this instead of being copied into a new buffer.
    pub fn spliced(head: Bytes, middle: Chunk, tail: Bytes) -> Body {
        Body {
            first: Some(Chunk::Shared(head)),
            rest: Rest::Chunks(Box::new([Some(middle), Some(Chunk::Shared(tail))])),
        }
    }

    /// A body sent in chunks as they arrive on `chunks`, ending when every sender is
    /// dropped. Sent with chunked transfer encoding; each chunk is flushed as it comes.
    pub fn channel(chunks: tokio::sync::mpsc::Receiver<Vec<u8>>) -> Body {
        Body {
            first: None,
            rest: Rest::Stream(Box::new(Streamed {
                chunks,
                _guard: None,
            })),
        }
    }

    /// Whether the body is streamed: the answer is not complete when the response starts.
    #[inline]
    pub fn is_streamed(&self) -> bool {
        matches!(self.rest, Rest::Stream(_))
    }

    /// Keeps `guard` alive until the body is dropped: when hyper has sent all of it, or
    /// the connection ended first. Only for streamed bodies (a complete body is dropped
    /// as soon as it is written, which the caller knows already).
    pub fn with_guard(mut self, guard: impl Send + Sync + 'static) -> Body {
        if let Rest::Stream(streamed) = &mut self.rest {
            streamed._guard = Some(Box::new(guard));
        }
        self
    }
}

impl From<Vec<u8>> for Body {
    fn from(buf: Vec<u8>) -> Body {
        Body {
            first: Some(Chunk::Owned { buf, pos: 0 }),
            rest: Rest::None,
        }
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Body {
        Body {
            first: Some(Chunk::Shared(bytes)),
            rest: Rest::None,
        }
    }
}

impl From<&'static [u8]> for Body {
    fn from(bytes: &'static [u8]) -> Body {
        Body::from(Bytes::from_static(bytes))
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

impl Body {
    /// Bytes left in the complete chunks (none for a stream).
    #[inline]
    fn remaining(&self) -> usize {
        let first = self.first.as_ref().map_or(0, Buf::remaining);
        match &self.rest {
            Rest::None | Rest::Stream(_) => first,
            Rest::Chunks(more) => first + more.iter().flatten().map(Buf::remaining).sum::<usize>(),
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Chunk;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, Infallible>>> {
        let this = self.get_mut();
        let next = match (this.first.take(), &mut this.rest) {
            (Some(chunk), _) => Some(chunk),
            (None, Rest::None) => None,
            (None, Rest::Chunks(more)) => {
                let [a, b] = &mut **more;
                a.take().or_else(|| b.take())
            }
            (None, Rest::Stream(streamed)) => {
                return streamed
                    .chunks
                    .poll_recv(cx)
                    .map(|chunk| chunk.map(|buf| Ok(Frame::data(Chunk::Owned { buf, pos: 0 }))));
            }
        };
        Poll::Ready(next.map(|c| Ok(Frame::data(c))))
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        !self.is_streamed() && self.remaining() == 0
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        if self.is_streamed() {
            return SizeHint::default();
        }
        SizeHint::with_exact(self.remaining() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn a_body_stays_small() {
        // Moved with every response from the handler to hyper's write.
        let bytes = std::mem::size_of::<Body>();
        // 56 on 2026-11-27 (64 with three options side by side).
        assert!(bytes <= 56, "a body is {bytes} bytes");
    }

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

    #[tokio::test]
    async fn a_channel_body_sends_chunks_until_the_senders_are_gone_then_drops_its_guard() {
        struct Guard(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Guard {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = tokio::sync::mpsc::channel(2);
        let body = Body::channel(rx).with_guard(Guard(dropped.clone()));
        assert!(body.is_streamed());
        assert_eq!(hyper::body::Body::size_hint(&body).exact(), None);
        assert!(!hyper::body::Body::is_end_stream(&body));
        tx.send(b"one ".to_vec()).await.unwrap();
        tx.send(b"two".to_vec()).await.unwrap();
        drop(tx);
        let collected = body.collect().await.unwrap().to_bytes();
        assert_eq!(&collected[..], b"one two");
        assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_spliced_body_sends_its_three_chunks_in_order() {
        for middle in [&b"0.04ms"[..], &[b'9'; 29][..], b""] {
            let body = Body::spliced(
                Bytes::from_static(b"head "),
                Chunk::Owned {
                    buf: middle.to_vec(),
                    pos: 0,
                },
                Bytes::from_static(b" tail"),
            );
            let want = [&b"head "[..], middle, b" tail"].concat();
            assert_eq!(
                hyper::body::Body::size_hint(&body).exact(),
                Some(want.len() as u64)
            );
            assert!(!hyper::body::Body::is_end_stream(&body));
            let collected = body.collect().await.unwrap().to_bytes();
            assert_eq!(&collected[..], &want[..]);
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
