//! A served connection's reads and writes, made as system calls of their own.
//!
//! tokio's `TcpStream` reads with the C library's `recv` and writes with `send` and
//! `writev`. In glibc these are cancellation points: in a process that has ever
//! started a second thread (the server has: a snapshot is checked on several threads,
//! and tokio keeps a blocking pool) each one is bracketed by two atomic updates of the
//! thread's cancellation state, ~140 ns a request as measured by interposing the two
//! calls (docs/PERFORMANCE.md, "cheapest-1: the user-space difference"), which the single-threaded
//! baseline never pays and nothing in this program uses (Rust never cancels a thread).
//! Here the same calls go through `syscall(2)`, which is not a cancellation point.
//!
//! Readiness is tokio's own, through the stream's public `poll_*_ready` and `try_io`,
//! and kept exactly as tokio keeps it for its own reads and writes: a call that would
//! block, or a read or write that moved fewer bytes than asked (the socket is drained,
//! or its send buffer full, under tokio's edge-triggered epoll), clears the readiness
//! seen before the call, and only that, so an event that arrives during the call is
//! never lost.

use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{Context, Poll, ready};

use tokio::io::Interest;
use tokio::net::TcpStream;

/// Reads into `buf` once `stream` is readable: the number of bytes read (0 at the end
/// of the stream). They are initialised by the read.
///
/// `drained` is the connection's own: set when a read came back short, which drained
/// the socket and cleared its readiness, so that the next read waits for readiness
/// first instead of trying a read `try_io` would refuse without a call (on a keep-alive
/// connection that is every next request: hyper reads again right after it answered,
/// before the client can have sent more). A wait that finds readiness there, because
/// an event came since, goes on to the read as before.
pub(crate) fn poll_recv(
    stream: &TcpStream,
    cx: &mut Context<'_>,
    buf: &mut [MaybeUninit<u8>],
    drained: &mut bool,
) -> Poll<io::Result<usize>> {
    if *drained {
        // Cleared first: a poll after this one's wake goes straight to the read.
        *drained = false;
        ready!(stream.poll_read_ready(cx))?;
    }
    let fd = stream.as_raw_fd();
    let len = buf.len();
    let read = || recv(fd, buf);
    let n = ready!(poll_io(stream, cx, Interest::READABLE, len, read))?;
    *drained = is_short(n, len);
    Poll::Ready(Ok(n))
}

/// Writes `buf` once `stream` is writable: the number of bytes written.
pub(crate) fn poll_send(
    stream: &TcpStream,
    cx: &mut Context<'_>,
    buf: &[u8],
) -> Poll<io::Result<usize>> {
    let fd = stream.as_raw_fd();
    poll_io(stream, cx, Interest::WRITABLE, buf.len(), || send(fd, buf))
}

/// Writes `bufs` in order, as one `writev`, once `stream` is writable: the number of
/// bytes written.
pub(crate) fn poll_send_vectored(
    stream: &TcpStream,
    cx: &mut Context<'_>,
    bufs: &[IoSlice<'_>],
) -> Poll<io::Result<usize>> {
    let fd = stream.as_raw_fd();
    let bufs = &bufs[..bufs.len().min(IOV_MAX)];
    let len = bufs.iter().map(|b| b.len()).sum();
    poll_io(stream, cx, Interest::WRITABLE, len, || writev(fd, bufs))
}

/// The most buffers one `writev` takes (Linux's `UIO_MAXIOV`); the standard library
/// caps its vectored writes the same way.
const IOV_MAX: usize = 1024;

/// `op` (which moves at most `len` bytes) once `stream` is ready for `interest`, as
/// tokio's `PollEvented::poll_read` / `poll_write` run their own call: a call that
/// would block, or moved fewer than `len` bytes but some, clears the readiness observed
/// before it (in `try_io`), and a call that would block waits for the next event. The
/// call is tried first and the readiness polled only when it could not be made (a
/// write finds the socket writable nearly always, and a read is tried after the wake
/// that said the socket is readable): one readiness poll a call fewer than tokio's.
#[inline]
fn poll_io(
    stream: &TcpStream,
    cx: &mut Context<'_>,
    interest: Interest,
    len: usize,
    mut op: impl FnMut() -> io::Result<usize>,
) -> Poll<io::Result<usize>> {
    loop {
        let mut short = None;
        // `try_io` makes no call when no readiness is known, and clears the readiness
        // it read before calling the closure exactly when the closure says "would
        // block": a short call says so too, its count kept.
        match stream.try_io(interest, || match op() {
            Ok(n) if is_short(n, len) => {
                short = Some(n);
                Err(io::ErrorKind::WouldBlock.into())
            }
            done => done,
        }) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Some(n) = short {
                    return Poll::Ready(Ok(n));
                }
                // Not ready: wait for the next event (registering this task), or try
                // again if one came since.
                ready!(if interest.is_readable() {
                    stream.poll_read_ready(cx)
                } else {
                    stream.poll_write_ready(cx)
                })?;
            }
            done => return Poll::Ready(done),
        }
    }
}

/// A call that moved some of its `len` bytes but not all: the socket is drained (or
/// its send buffer full), and `poll_io` clears the readiness seen before it, so
/// `poll_recv`'s `drained` is set by exactly the reads that cleared it.
#[inline]
fn is_short(n: usize, len: usize) -> bool {
    0 < n && n < len
}

/// The result of a system call that returns a count or -1 with `errno` set.
fn count(n: libc::c_long) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

#[cfg(target_os = "linux")]
fn recv(fd: RawFd, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    // SAFETY: `recvfrom` writes at most `buf.len()` bytes into `buf`, which is valid
    // and exclusively borrowed for the call (writing to uninitialised bytes is what
    // `MaybeUninit` allows), and writes no address (both address pointers are null).
    // `fd` is the stream's open socket, borrowed by the caller for the call.
    count(unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd,
            buf.as_mut_ptr(),
            buf.len(),
            0,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    })
}

#[cfg(target_os = "linux")]
fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `sendto` reads at most `buf.len()` bytes from `buf`, valid for the call;
    // no address is given (null, 0). `MSG_NOSIGNAL`: a closed peer is an `EPIPE`
    // error, not a signal, as in the standard library's `send`. `fd` as in `recv`.
    count(unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd,
            buf.as_ptr(),
            buf.len(),
            libc::MSG_NOSIGNAL,
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::socklen_t,
        )
    })
}

#[cfg(target_os = "linux")]
fn writev(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    // SAFETY: `IoSlice` is guaranteed ABI-compatible with `iovec` on Unix, so `bufs`
    // is an array of `bufs.len()` (at most `IOV_MAX`) valid `iovec`s describing
    // borrowed bytes that `writev` only reads during the call. `fd` as in `recv`.
    // (`SIGPIPE` is ignored in every Rust program, as for the standard library's
    // `writev`.)
    count(unsafe {
        libc::syscall(
            libc::SYS_writev,
            fd,
            bufs.as_ptr().cast::<libc::iovec>(),
            bufs.len() as libc::c_int,
        )
    })
}

// Elsewhere the C library's own calls (the cancellation cost is glibc's).

#[cfg(not(target_os = "linux"))]
fn recv(fd: RawFd, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    // SAFETY: as the Linux `recv` above, through the C library's `recv`.
    count(unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) } as libc::c_long)
}

#[cfg(not(target_os = "linux"))]
fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: as the Linux `send` above, through the C library's `send` (no
    // `MSG_NOSIGNAL` everywhere; `SIGPIPE` is ignored in every Rust program).
    count(unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), 0) } as libc::c_long)
}

#[cfg(not(target_os = "linux"))]
fn writev(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    // SAFETY: as the Linux `writev` above, through the C library's `writev`.
    count(
        unsafe { libc::writev(fd, bufs.as_ptr().cast(), bufs.len() as libc::c_int) }
            as libc::c_long,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair() -> (TcpStream, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        (client.unwrap(), accepted.unwrap().0)
    }

    /// `io`, which must end within 10 s: a readiness cleared wrongly is a call that
    /// is never woken, and the test fails instead of hanging.
    async fn within<T>(io: impl std::future::Future<Output = T>) -> T {
        tokio::time::timeout(std::time::Duration::from_secs(10), io)
            .await
            .expect("an I/O call was never woken")
    }

    /// One read of at most `max` bytes; `drained` is the connection's flag.
    async fn recv_some(stream: &TcpStream, drained: &mut bool, max: usize) -> Vec<u8> {
        let mut buf = vec![MaybeUninit::new(0u8); max];
        let n = within(poll_fn(|cx| poll_recv(stream, cx, &mut buf, drained)))
            .await
            .unwrap();
        buf[..n]
            .iter()
            // SAFETY: every byte was initialised (`MaybeUninit::new(0)`), the first `n`
            // written again by the read.
            .map(|b| unsafe { b.assume_init() })
            .collect()
    }

    #[tokio::test]
    async fn reads_what_was_sent_and_waits_for_more_after_a_short_read() {
        let (mut client, server) = pair().await;
        let drained = &mut false;
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        // A short read (fewer bytes than asked): the readiness is cleared ...
        assert_eq!(
            recv_some(&server, drained, 4096).await,
            b"GET / HTTP/1.1\r\n\r\n"
        );
        assert!(*drained);
        // ... and bytes sent afterwards still wake the next read.
        let later = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            client.write_all(b"next").await.unwrap();
            client
        });
        assert_eq!(recv_some(&server, drained, 4096).await, b"next");
        let mut client = later.await.unwrap();
        // Bytes that came before the next read, after a short one: the readiness that
        // came with them is seen, and read.
        client.write_all(b"0123456789").await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(*drained);
        // A read that fills the buffer leaves the rest for the next.
        assert_eq!(recv_some(&server, drained, 4).await, b"0123");
        assert!(!*drained, "a full read does not say the socket is drained");
        assert_eq!(recv_some(&server, drained, 4096).await, b"456789");
        drop(client);
        assert_eq!(
            recv_some(&server, drained, 4096).await,
            b"",
            "the end of the stream"
        );
    }

    #[tokio::test]
    async fn writes_whole_and_vectored_and_waits_when_the_send_buffer_is_full() {
        let (mut client, server) = pair().await;
        let n = within(poll_fn(|cx| poll_send(&server, cx, b"head")))
            .await
            .unwrap();
        assert_eq!(n, 4);
        let bufs = [
            IoSlice::new(b", body"),
            IoSlice::new(b""),
            IoSlice::new(b", end"),
        ];
        let n = within(poll_fn(|cx| poll_send_vectored(&server, cx, &bufs)))
            .await
            .unwrap();
        assert_eq!(n, 11);
        let mut got = [0u8; 15];
        within(client.read_exact(&mut got)).await.unwrap();
        assert_eq!(&got, b"head, body, end");

        // Far more than the socket buffers hold (32 MiB), with no reader: a write comes
        // back short, then one waits (pending) until the reader drains, and nothing is
        // lost.
        let total = 32 << 20;
        let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
        let writer = tokio::spawn(async move {
            let mut sent = 0;
            let mut calls = 0;
            while sent < data.len() {
                sent += within(poll_fn(|cx| poll_send(&server, cx, &data[sent..])))
                    .await
                    .unwrap();
                calls += 1;
            }
            calls
        });
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(!writer.is_finished(), "32 MiB went out with nobody reading");
        let mut received = Vec::with_capacity(total);
        let mut chunk = vec![0u8; 1 << 16];
        while received.len() < total {
            let n = within(client.read(&mut chunk)).await.unwrap();
            assert!(n > 0);
            received.extend_from_slice(&chunk[..n]);
        }
        let calls = within(writer).await.unwrap();
        assert!(calls > 1, "the first write was not short");
        assert!(
            received
                .iter()
                .enumerate()
                .all(|(i, b)| *b == (i % 251) as u8)
        );
    }

    #[tokio::test]
    async fn a_closed_peer_is_an_error_not_a_signal() {
        let (client, server) = pair().await;
        drop(client);
        let mut failed = None;
        for _ in 0..100 {
            match within(poll_fn(|cx| poll_send(&server, cx, &[0u8; 1024]))).await {
                Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(5)).await,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let e = failed.expect("writes to a closed peer kept succeeding");
        assert!(
            matches!(
                e.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ),
            "{e:?}"
        );
    }
}
