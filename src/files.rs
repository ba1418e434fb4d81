//! Files that a reader or a crash never sees half-written, and the modes of private ones.
//!
//! One way to publish a file: [`write_atomic`] writes a temporary file with a unique
//! name in the same directory, `fsync`s it, renames it over the target, then `fsync`s
//! the directory. The temporary file must be in the same directory because `rename` is
//! only atomic within one file system; the directory is synced because the rename lives
//! in its entries, and without that a crash can bring back the old file after success
//! was reported. A snapshot must only ever be replaced this way: servers map it shared
//! (see `snapshot::Snapshot::open`), and a file rewritten in place would change under
//! them, while a rename leaves their mapping on the old inode.
//!
//! Credentials and usage data are [`Mode::Private`] (0600 files, 0700 directories), as
//! ssh and the AWS CLI keep theirs; snapshots and price sources are [`Mode::Shared`].

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Who may read a file written here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Readable by everyone (0644 before the umask): snapshots, price sources.
    Shared,
    /// The owner only (0600): keys files, their locks, usage data.
    Private,
}

impl Mode {
    fn bits(self) -> u32 {
        match self {
            Mode::Shared => 0o644,
            Mode::Private => 0o600,
        }
    }
}

/// Publishes `bytes` at `path` (see the module docs), readable by everyone.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_mode(path, bytes, Mode::Shared)
}

/// Publishes `bytes` at `path` with the given [`Mode`].
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: Mode) -> io::Result<()> {
    let mut pending = Pending::create(path, mode)?;
    pending.write_all(bytes)?;
    pending.publish()
}

/// A file being written aside, under the temporary name [`write_atomic`] uses, for
/// content that arrives in pieces (a download) or that must be checked before it
/// replaces the target: write it ([`Write`]), [`Pending::sync`] it, read or map it at
/// [`Pending::temp_path`], then [`Pending::publish`] it (fsync, rename over the target,
/// directory fsync). Dropped without being published, the temporary file is removed,
/// so the target never holds a partial or refused version.
#[derive(Debug)]
pub struct Pending {
    file: File,
    tmp: PathBuf,
    target: PathBuf,
    published: bool,
}

impl Pending {
    /// Creates the temporary file for `path` (in the same directory) with `mode`.
    pub fn create(path: &Path, mode: Mode) -> io::Result<Pending> {
        let tmp = temp_name(path)?;
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode.bits())
            .open(&tmp)?;
        Ok(Pending {
            file,
            tmp,
            target: path.to_path_buf(),
            published: false,
        })
    }

    /// Where the content is being written.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Flushes the content written so far to the disk (`fsync`).
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }

    /// Syncs the file, renames it over the target and syncs the directory. A mapping
    /// of the temporary file stays valid: it follows the inode, which the rename keeps.
    pub fn publish(mut self) -> io::Result<()> {
        self.file.sync_all()?;
        std::fs::rename(&self.tmp, &self.target)?;
        self.published = true;
        sync_dir(&parent(&self.target));
        Ok(())
    }
}

impl Write for Pending {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Removes the file at `path` and syncs its directory, so the removal survives a crash
/// as a [`write_atomic`] does. A file already gone is no error.
pub fn remove_durably(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    sync_dir(&parent(path));
    Ok(())
}

/// Whether `name` is a temporary file that [`write_atomic`] left behind for a file
/// named `of` (after a crash between write and rename), so that the owner of a
/// directory can remove such leftovers.
pub fn is_leftover_of(name: &str, of: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.strip_prefix(of))
        .is_some_and(|n| n.starts_with(".tmp-"))
}

/// Creates `dir` (and its parents) if missing; a directory this creates is owner-only
/// with [`Mode::Private`].
pub fn create_dir(dir: &Path, mode: Mode) -> io::Result<()> {
    let bits = match mode {
        Mode::Shared => 0o755,
        Mode::Private => 0o700,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(bits)
        .create(dir)
}

/// An exclusive advisory lock on the sidecar `PATH.lock` (owner-only), held until the
/// returned file is dropped. It serialises read-modify-write cycles on `path` between
/// processes; the sidecar is locked rather than `path` itself because `path` is
/// replaced by rename, so a lock on it would not outlive the first writer.
pub fn lock_sidecar(path: &Path) -> io::Result<File> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock = PathBuf::from(name);
    let file = open_lock(&lock)?;
    file.lock().map_err(|e| {
        io::Error::new(e.kind(), format!("{}: could not lock: {e}", lock.display()))
    })?;
    Ok(file)
}

/// The same exclusive lock on `DIR/NAME`, without waiting: `Ok(None)` when another
/// open file holds it (another process, or this one through another open). A directory
/// that belongs to one process at a time holds such a lock for that process's life;
/// the operating system releases it when the process ends, `kill -9` included.
pub fn try_lock_in(dir: &Path, name: &str) -> io::Result<Option<File>> {
    let lock = dir.join(name);
    let file = open_lock(&lock)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(io::Error::new(
            e.kind(),
            format!("{}: could not lock: {e}", lock.display()),
        )),
    }
}

fn open_lock(lock: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(Mode::Private.bits())
        .open(lock)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", lock.display())))
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `.NAME.tmp-PID-RANDOM` beside `path`: unique between processes (the pid) and
/// between writers in one process (the random part).
fn temp_name(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{}: has no file name", path.display())))?;
    let mut suffix = [0u8; 6];
    getrandom::fill(&mut suffix).map_err(|e| io::Error::other(e.to_string()))?;
    let hex: String = suffix.iter().map(|b| format!("{b:02x}")).collect();
    Ok(parent(path).join(format!(
        ".{}.tmp-{}-{hex}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// Best effort: some file systems refuse to open a directory for syncing; the data is
/// written either way, only the rename's durability across a crash is at stake.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// A new directory of a unit test's own under the system's temporary directory,
/// `tldsnap-TAG-RANDOM`, removed with what it holds when dropped.
#[cfg(test)]
pub(crate) struct TestDir(pub(crate) PathBuf);

#[cfg(test)]
impl TestDir {
    pub(crate) fn new(tag: &str) -> TestDir {
        let mut r = [0u8; 6];
        getrandom::fill(&mut r).expect("random");
        let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
        let p = std::env::temp_dir().join(format!("tldsnap-{tag}-{hex}"));
        std::fs::create_dir_all(&p).expect("temp dir");
        TestDir(p)
    }
}

#[cfg(test)]
impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

#[cfg(test)]
impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

#[cfg(test)]
impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn temp_dir(tag: &str) -> TestDir {
        TestDir::new(&format!("files-{tag}"))
    }

    fn mode_of(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn publishes_whole_files_with_their_mode_and_leaves_nothing_behind() {
        let dir = temp_dir("atomic");
        let shared = dir.join("a.snap");
        write_atomic(&shared, b"one").unwrap();
        write_atomic(&shared, b"two").unwrap();
        assert_eq!(std::fs::read(&shared).unwrap(), b"two");
        let private = dir.join("keys.json");
        write_atomic_mode(&private, b"{}", Mode::Private).unwrap();
        assert_eq!(mode_of(&private), 0o600);
        assert_eq!(mode_of(&shared) & 0o600, 0o600);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "temporary files left: {names:?}");
        // A missing directory is an error, not a panic, and leaves nothing.
        assert!(write_atomic(&dir.join("nope/x"), b"x").is_err());
        remove_durably(&shared).unwrap();
        assert!(!shared.exists());
        remove_durably(&shared).unwrap();
    }

    #[test]
    fn private_dirs_and_locks_are_owner_only() {
        let dir = temp_dir("private");
        let data = dir.join("data/inner");
        create_dir(&data, Mode::Private).unwrap();
        assert_eq!(mode_of(&data), 0o700);
        let keys = dir.join("keys.json");
        let guard = lock_sidecar(&keys).unwrap();
        assert_eq!(mode_of(&dir.join("keys.json.lock")), 0o600);
        drop(guard);
        // A directory's lock: the second open of it is refused at once, not queued.
        let held = try_lock_in(&data, "x.lock").unwrap().expect("free");
        assert_eq!(mode_of(&data.join("x.lock")), 0o600);
        assert!(try_lock_in(&data, "x.lock").unwrap().is_none(), "held");
        drop(held);
        assert!(try_lock_in(&data, "x.lock").unwrap().is_some(), "released");
    }

    #[test]
    fn a_pending_file_replaces_its_target_only_when_published() {
        let dir = temp_dir("pending");
        let target = dir.join("s.snap");
        write_atomic(&target, b"old").unwrap();
        let mut pending = Pending::create(&target, Mode::Shared).unwrap();
        pending.write_all(b"ne").unwrap();
        pending.write_all(b"w").unwrap();
        pending.sync().unwrap();
        let tmp = pending.temp_path().to_path_buf();
        assert_eq!(std::fs::read(&tmp).unwrap(), b"new");
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        let name = tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(is_leftover_of(&name, "s.snap"), "{name}");
        pending.publish().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(!tmp.exists());
        // Dropped unpublished: the temporary file goes, the target stays.
        let mut refused = Pending::create(&target, Mode::Shared).unwrap();
        refused.write_all(b"bad").unwrap();
        let tmp = refused.temp_path().to_path_buf();
        drop(refused);
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn leftovers_are_recognised_by_name() {
        assert!(is_leftover_of(".usage.json.tmp-12-abcdef", "usage.json"));
        assert!(!is_leftover_of("usage.json", "usage.json"));
        assert!(!is_leftover_of(".usage.json.lock", "usage.json"));
    }
}
