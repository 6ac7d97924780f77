//! The state repo's git history, through gix: initialise, commit what a run wrote, read old versions.
//!
//! A run commits only the folders it owns (`snapshot/`, `forecast/`, `ops/`) and `pm-state.md`, on top of the
//! current `HEAD` tree, so anything else a person committed is carried over untouched. The index is rewritten
//! to match the new commit so that `git status` in the state repo is clean afterwards.

use std::path::Path;

use chrono::{DateTime, Utc};
use gix::ObjectId;
use gix::bstr::BString;
use gix::objs::tree::{Entry, EntryKind};

/// Why a git operation failed; the cause is kept as the error's source.
#[derive(Debug, thiserror::Error)]
#[error("git, {what}: {source}")]
pub struct GitError {
    /// What was being done.
    pub what: String,
    /// What went wrong.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

fn err<E: std::error::Error + Send + Sync + 'static>(
    what: impl Into<String>,
) -> impl FnOnce(E) -> GitError {
    let what = what.into();
    move |e| GitError {
        what,
        source: Box::new(e),
    }
}

/// Who a commit is by and when: both are inputs, never read from the environment.
#[derive(Debug, Clone)]
pub struct Signature {
    /// Name.
    pub name: String,
    /// E-mail.
    pub email: String,
    /// Time of the commit.
    pub time: DateTime<Utc>,
}

/// A change to a tree: a path (slash-separated) and its new bytes, or `None` to remove it.
pub type Edit = (String, Option<Vec<u8>>);

/// The top-level paths a pipeline run rewrites and commits as they are on disk. `ops/` changes only as the
/// apply stage moves files from `ops/pending/` to `ops/applied/`, and `pm-state.md` never: a proposal in
/// the checkout reaches the branch through a pull request, not a run.
pub(crate) const OWNED_PATHS: &[&str] = &["forecast", super::SNAPSHOT_DIR];

/// Opens the git repository at `dir`, or initialises one (branch `main`) if there is none.
pub fn open_or_init(dir: &Path) -> Result<gix::Repository, GitError> {
    if dir.join(".git").exists() {
        return gix::open(dir).map_err(err(format!("opening {}", dir.display())));
    }
    let repo = gix::init(dir).map_err(err(format!("initialising {}", dir.display())))?;
    tracing::info!(
        "{} was not a git repository: made one (branch main), whose first commit takes the state repo's \
         files as they are",
        dir.display()
    );
    // Name the first branch `main` whatever the machine's git defaults say.
    start_on(&repo, "main")?;
    gix::open(dir).map_err(err(format!("reopening {}", dir.display())))
}

/// Names the branch the first commit will make `branch`, when there is no commit yet (a new repository, or
/// the clone of an empty one, whose branch is whatever the machine's git calls a first branch: `master`
/// there split the state repo from the `main` the workflow and the runs use). Returns whether it did; a
/// repository with commits is left as it is.
pub fn start_on(repo: &gix::Repository, branch: &str) -> Result<bool, GitError> {
    if head(repo).is_some() {
        return Ok(false);
    }
    std::fs::write(
        repo.git_dir().join("HEAD"),
        format!("ref: refs/heads/{branch}\n"),
    )
    .map_err(err(format!("setting HEAD to refs/heads/{branch}")))?;
    Ok(true)
}

/// Why `name` cannot be a branch's name (`main`, `pages`), if it cannot: git's rules (no `..`, no space,
/// not `HEAD`, …), and not a full ref name or an option.
pub fn branch_name_problem(name: &str) -> Option<String> {
    if name.starts_with('-') {
        return Some(format!("\"{name}\" would be read as an option"));
    }
    if name.starts_with("refs/") {
        return Some(format!(
            "\"{name}\" is a full ref name: give the branch's own name ({})",
            name.strip_prefix("refs/heads/").unwrap_or("pages")
        ));
    }
    let full = format!("refs/heads/{name}");
    gix::validate::reference::branch_name(full.as_str().into())
        .err()
        .map(|e| format!("\"{name}\" is not a branch name git accepts ({e})"))
}

/// Why `name` cannot be a git remote's name (`origin`), if it cannot: git's rules for the refs under it
/// (`refs/remotes/NAME/…`), and not an option. A name starting with `-` reached `git fetch` as one
/// (audit 153: `--upload-pack=CMD` ran CMD).
pub fn remote_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("it is empty".to_owned());
    }
    if name.starts_with('-') {
        return Some(format!("\"{name}\" would be read as an option"));
    }
    let full = format!("refs/remotes/{name}/HEAD");
    gix::validate::reference::name(full.as_str().into())
        .err()
        .map(|e| format!("\"{name}\" is not a remote name git accepts ({e})"))
}

/// The branch checked out (`main`), or `None` on a detached `HEAD`.
pub fn checked_out_branch(repo: &gix::Repository) -> Option<String> {
    repo.head_name()
        .ok()
        .flatten()
        .map(|n| n.shorten().to_string())
}

/// The commit `HEAD` points to, if any.
pub fn head(repo: &gix::Repository) -> Option<ObjectId> {
    repo.head_id().ok().map(|id| id.detach())
}

/// Commits `paths` (top-level names under the work tree) as they are on disk on top of `HEAD`'s tree, then
/// `edits` (slash-separated path to bytes, `None` to remove) on top of that.
///
/// Paths missing on disk are removed from the tree; every other entry of `HEAD` is kept. Returns the new
/// commit, or `None` when the tree would not change (nothing is committed then).
pub(crate) fn commit_paths(
    repo: &gix::Repository,
    paths: &[&str],
    edits: &[Edit],
    message: &str,
    sig: &Signature,
) -> Result<Option<ObjectId>, GitError> {
    let workdir = repo.workdir().ok_or_else(|| GitError {
        what: "committing".into(),
        source: "the state repo is bare; CommiTea needs a work tree".into(),
    })?;
    let parent = head(repo);
    // The first commit of a state repo takes it as it is: its ledger, op files and config too (a config
    // left out was "edited, not committed" at every run after, audit 120).
    let first: Vec<&str>;
    let paths = if parent.is_none() {
        first = paths
            .iter()
            .copied()
            .chain(
                [
                    "ops",
                    super::LEDGER_FILE,
                    crate::config::FILE_NAME,
                    ".gitignore",
                ]
                .into_iter()
                .filter(|p| !paths.contains(p)),
            )
            .collect();
        first.as_slice()
    } else {
        paths
    };
    let mut entries: Vec<Entry> = match parent {
        Some(p) => {
            let commit = repo.find_commit(p).map_err(err("reading HEAD"))?;
            let tree = commit.tree().map_err(err("reading HEAD's tree"))?;
            let decoded = tree.decode().map_err(err("decoding HEAD's tree"))?;
            decoded
                .entries
                .iter()
                .filter(|e| !paths.iter().any(|p| e.filename == p.as_bytes()))
                .map(|e| Entry {
                    mode: e.mode,
                    filename: e.filename.to_owned(),
                    oid: e.oid.to_owned(),
                })
                .collect()
        }
        None => Vec::new(),
    };
    let mut objects = NewObjects::new(repo);
    let mut left_out = Vec::new();
    for p in paths {
        if let Some(e) = entry_for(&mut objects, &workdir.join(p), p, &mut left_out)? {
            entries.push(e);
        }
    }
    for rel in &left_out {
        tracing::warn!(
            "{rel} is not a file of the snapshot (CommiTea rewrites snapshot/ on every sync): left out of the \
             commit; move it out of snapshot/ to keep it"
        );
    }
    entries.sort();
    let mut tree = objects.tree(gix::objs::Tree { entries })?;
    objects.finish()?;
    if !edits.is_empty() {
        tree = edit(repo, tree, edits)?;
    }
    if let Some(p) = parent {
        let old_tree = repo
            .find_commit(p)
            .and_then(|c| c.tree_id())
            .map_err(err("reading HEAD's tree"))?;
        if old_tree == tree {
            refresh_index(repo, tree, paths)?;
            return Ok(None);
        }
    }
    commit_tree(repo, tree, parent, message, sig).map(Some)
}

/// Rewrites the index from `tree` when its entries under `paths` differ from the tree's.
///
/// A commit moves `HEAD` and then writes the index; a run killed between the two leaves `HEAD` right and
/// the index at the tree before, so `git status` shows the run's files as changed. The next run finds
/// nothing to commit, and without this the index would stay behind until some later commit.
fn refresh_index(repo: &gix::Repository, tree: ObjectId, paths: &[&str]) -> Result<(), GitError> {
    let owned = |path: &[u8]| {
        paths.iter().any(|p| {
            path.strip_prefix(p.as_bytes())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
        })
    };
    let entries = |index: &gix::index::File| -> Vec<(Vec<u8>, ObjectId)> {
        index
            .entries()
            .iter()
            .map(|e| (e.path(index).to_vec(), e.id))
            .filter(|(path, _)| owned(path))
            .collect()
    };
    let mut wanted = repo
        .index_from_tree(&tree)
        .map_err(err("building the index"))?;
    let current = repo.index_or_empty().map_err(err("reading the index"))?;
    if entries(&current) != entries(&wanted) {
        wanted
            .write(Default::default())
            .map_err(err("writing the index"))?;
    }
    Ok(())
}

/// Commits everything in the work tree except `.git` and the top-level names in `exclude`.
pub fn commit_all(
    repo: &gix::Repository,
    exclude: &[&str],
    message: &str,
    sig: &Signature,
) -> Result<Option<ObjectId>, GitError> {
    let workdir = repo.workdir().ok_or_else(|| GitError {
        what: "committing".into(),
        source: "the state repo is bare".into(),
    })?;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(workdir).map_err(err("listing the work tree"))? {
        let entry = entry.map_err(err("listing the work tree"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let lock = name.trim_start_matches('.') == super::lock::LOCK_FILE;
        let temporary = name.ends_with(super::TMP_SUFFIX);
        if name != ".git" && !lock && !temporary && !exclude.contains(&name.as_str()) {
            names.push(name);
        }
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    commit_paths(repo, &refs, &[], message, sig)
}

fn commit_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    parent: Option<ObjectId>,
    message: &str,
    sig: &Signature,
) -> Result<ObjectId, GitError> {
    let actor = gix::actor::Signature {
        name: BString::from(sig.name.as_str()),
        email: BString::from(sig.email.as_str()),
        time: gix::date::Time::new(sig.time.timestamp(), 0),
    };
    let mut buf = gix::date::parse::TimeBuf::default();
    let sref = actor.to_ref(&mut buf);
    // Pushed to the default branch, a message's "close acme/api#114" closes it on Gitea.
    let message = crate::gitea::inert_refs(message);
    let id = repo
        .commit_as(sref, sref, "HEAD", message.as_str(), tree, parent)
        .map_err(err("writing the commit"))?
        .detach();
    // The commit is made and the branch moved: an index that cannot be written now (another git command
    // holds `.git/index.lock`) is no reason to call the run failed, nor to put the files back under the
    // new commit (an audit saw both). The next commit, or nothing-to-commit run, writes it.
    let written = repo
        .index_from_tree(&tree)
        .map_err(err("building the index"))
        .and_then(|mut index| {
            index
                .write(Default::default())
                .map_err(err("writing the index"))
        });
    if let Err(e) = written {
        tracing::warn!(
            "committed {id}, but the index was not updated ({e}): `git status` shows the committed files as \
             changed until the next run; if no git command is running in the state repo, remove \
             .git/index.lock"
        );
    }
    Ok(id)
}

/// Puts the file or folder at `path` (`rel` in the work tree, slash-separated) into the object database
/// (through `objects`); `None` if it is missing or an empty folder. A file under `snapshot/` that is not one
/// of the snapshot's goes to `left_out` instead.
/// The bytes a commit stores for the file `rel` read from the work tree. CommiTea writes its own files
/// (`snapshot/`, `forecast/`) with LF line endings (a CR in an issue's text is escaped): a CRLF there is
/// a checkout's conversion (core.autocrlf, `eol=crlf`), which git itself undoes when it adds the file,
/// and so does a commit of CommiTea's (audit 117: every file "changed" in such a checkout).
fn as_committed(rel: &str, bytes: Vec<u8>) -> Vec<u8> {
    let own = OWNED_PATHS
        .iter()
        .any(|p| rel.strip_prefix(p).is_some_and(|r| r.starts_with('/')));
    if own && bytes.windows(2).any(|w| w == b"\r\n") {
        super::as_lf(&String::from_utf8_lossy(&bytes))
            .into_owned()
            .into_bytes()
    } else {
        bytes
    }
}

fn entry_for(
    objects: &mut NewObjects<'_>,
    path: &Path,
    rel: &str,
    left_out: &mut Vec<String>,
) -> Result<Option<Entry>, GitError> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(format!("reading {}", path.display()))(e)),
    };
    if meta.is_file() {
        if rel.starts_with("snapshot/") && !super::snapshot::is_snapshot_file(rel) {
            left_out.push(rel.to_owned());
            return Ok(None);
        }
        let bytes = std::fs::read(path).map_err(err(format!("reading {}", path.display())))?;
        let oid = objects.add(gix::objs::Kind::Blob, as_committed(rel, bytes))?;
        return Ok(Some(Entry {
            mode: EntryKind::Blob.into(),
            filename: name.into(),
            oid,
        }));
    }
    if !meta.is_dir() {
        return Ok(None); // symlinks and special files are not state
    }
    let mut entries = Vec::new();
    for child in std::fs::read_dir(path).map_err(err(format!("listing {}", path.display())))? {
        let child = child.map_err(err(format!("listing {}", path.display())))?;
        let child_name = child.file_name().to_string_lossy().into_owned();
        // A repository's own folder (a checkout of the pages branch in the site's folder) is never
        // content: git refuses it in a tree (audit 191: a nested `.git`, its config's credentials with it,
        // was committed to the pages branch).
        if child_name.ends_with(super::TMP_SUFFIX) || child_name == ".git" {
            continue;
        }
        let child_rel = format!("{rel}/{child_name}");
        if let Some(e) = entry_for(objects, &child.path(), &child_rel, left_out)? {
            entries.push(e);
        }
    }
    if entries.is_empty() {
        return Ok(None);
    }
    entries.sort();
    let oid = objects.tree(gix::objs::Tree { entries })?;
    Ok(Some(Entry {
        mode: EntryKind::Tree.into(),
        filename: name.into(),
        oid,
    }))
}

/// Below this many new objects a commit writes them loose, as `git` unpacks a small fetch
/// (`fetch.unpackLimit`, 100); from it on, one pack.
const PACK_FROM_OBJECTS: usize = 100;

/// The new objects held in memory before they are written out as a pack: bounds a huge first commit's memory.
const PACK_FLUSH_BYTES: usize = 64 << 20;

/// The objects a commit adds, written together when it ends: the first snapshot of thousands of issues as one
/// pack instead of thousands of loose files (each a file created, written and renamed; at 5,000 issues that
/// cost the run seconds of system time), a daily run's few changed files loose as before.
///
/// Objects the repository already has are not written again, and none is written twice.
struct NewObjects<'r> {
    repo: &'r gix::Repository,
    /// The repository's objects, looked up without rescanning its packs on every miss (most objects of a
    /// first commit are new; `seen` covers the packs this commit writes).
    existing: gix::OdbHandle,
    pending: Vec<(ObjectId, gix::objs::Kind, Vec<u8>)>,
    pending_bytes: usize,
    seen: std::collections::HashSet<ObjectId>,
}

impl<'r> NewObjects<'r> {
    fn new(repo: &'r gix::Repository) -> Self {
        let mut existing = repo.objects.clone();
        existing.refresh_never();
        NewObjects {
            repo,
            existing,
            pending: Vec::new(),
            pending_bytes: 0,
            seen: std::collections::HashSet::new(),
        }
    }

    /// The id of an object of `kind` with `data`, which is written when the commit ends unless it exists.
    fn add(&mut self, kind: gix::objs::Kind, data: Vec<u8>) -> Result<ObjectId, GitError> {
        let id = gix::objs::compute_hash(self.repo.object_hash(), kind, &data)
            .map_err(err("hashing an object"))?;
        if self.seen.contains(&id) || gix::objs::Exists::exists(&self.existing, &id) {
            return Ok(id);
        }
        self.seen.insert(id);
        self.pending_bytes += data.len();
        self.pending.push((id, kind, data));
        if self.pending_bytes >= PACK_FLUSH_BYTES {
            self.write_pending()?;
        }
        Ok(id)
    }

    /// The id of `tree`, written like any other new object.
    fn tree(&mut self, tree: gix::objs::Tree) -> Result<ObjectId, GitError> {
        use gix::objs::WriteTo as _;
        let mut data = Vec::new();
        tree.write_to(&mut data).map_err(err("encoding a tree"))?;
        self.add(gix::objs::Kind::Tree, data)
    }

    /// Writes what is pending; every object added is in the repository afterwards.
    fn finish(mut self) -> Result<(), GitError> {
        self.write_pending()
    }

    fn write_pending(&mut self) -> Result<(), GitError> {
        let objects = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        if objects.len() < PACK_FROM_OBJECTS {
            for (_, kind, data) in &objects {
                gix::objs::Write::write_buf(&self.repo.objects, *kind, data)
                    .map_err(err("writing an object"))?;
            }
            return Ok(());
        }
        write_pack(self.repo, &objects)
    }
}

/// Writes `objects` into the repository as one pack and its index (every object whole: a commit's new files
/// are mostly new content, and a later `git gc` finds the deltas).
fn write_pack(
    repo: &gix::Repository,
    objects: &[(ObjectId, gix::objs::Kind, Vec<u8>)],
) -> Result<(), GitError> {
    use gix_pack as pack;
    use rayon::prelude::*;
    let hash = repo.object_hash();
    // One compressor per thread, reset between objects: setting one up costs more than compressing a
    // typical state file.
    let entries = objects
        .par_iter()
        .map_init(
            || gix::zlib::stream::deflate::Compress::new(gix::zlib::Compression::BEST_SPEED),
            |compressor, (id, kind, data)| {
                Ok(pack::data::output::Entry {
                    id: *id,
                    kind: pack::data::output::entry::Kind::Base(*kind),
                    decompressed_size: data.len(),
                    compressed_data: deflate(compressor, data)?,
                })
            },
        )
        .collect::<Result<Vec<_>, GitError>>()?;
    let count = u32::try_from(entries.len()).map_err(|_| GitError {
        what: "writing a pack".into(),
        source: format!("{} objects are more than a pack holds", entries.len()).into(),
    })?;
    let mut data = Vec::new();
    for written in pack::data::output::bytes::FromEntriesIter::new(
        std::iter::once(Ok(entries)),
        &mut data,
        count,
        pack::data::Version::V2,
        hash,
    ) {
        written.map_err(err("encoding a pack"))?;
    }
    let dir = repo.objects.store_ref().path().join("pack");
    std::fs::create_dir_all(&dir).map_err(err(format!("creating {}", dir.display())))?;
    let written = pack::Bundle::write_to_directory(
        &mut data.as_slice(),
        Some(&dir),
        &mut gix::progress::Discard,
        &std::sync::atomic::AtomicBool::new(false),
        None::<gix::objs::find::Never>,
        hash,
        pack::bundle::write::Options::default(),
    )
    .map_err(err("writing a pack"))?;
    // The `.keep` file guards a fetched pack until refs point into it; a kept pack is never repacked by
    // `git gc`, and this one is referenced by the commit that follows at once.
    if let Some(keep) = written.keep_path {
        std::fs::remove_file(&keep).map_err(err(format!("removing {}", keep.display())))?;
    }
    Ok(())
}

/// `data` as one zlib stream, with `compressor` reset first.
fn deflate(
    compressor: &mut gix::zlib::stream::deflate::Compress,
    data: &[u8],
) -> Result<Vec<u8>, GitError> {
    use gix::zlib::{Status, stream::deflate::FlushCompress};
    compressor.reset();
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    let mut buf = [0u8; 16 * 1024];
    let mut input = data;
    loop {
        let (was_in, was_out) = (compressor.total_in(), compressor.total_out());
        let status = compressor
            .compress(input, &mut buf, FlushCompress::Finish)
            .map_err(err("compressing an object for a pack"))?;
        let read = usize::try_from(compressor.total_in() - was_in).unwrap_or(input.len());
        let wrote = usize::try_from(compressor.total_out() - was_out).unwrap_or(0);
        input = &input[read.min(input.len())..];
        out.extend_from_slice(&buf[..wrote.min(buf.len())]);
        if status == Status::StreamEnd {
            return Ok(out);
        }
        if read == 0 && wrote == 0 {
            return Err(GitError {
                what: "compressing an object for a pack".into(),
                source: "zlib made no progress".into(),
            });
        }
    }
}

/// The bytes of `path` (slash-separated, from the repo root) in `commit`, if it exists there.
pub fn read_at(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
) -> Result<Option<Vec<u8>>, GitError> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(err(format!("reading the tree of {commit}")))?;
    let entry = tree
        .lookup_entry_by_path(path)
        .map_err(err(format!("looking up {path}")))?;
    match entry {
        Some(e) => {
            let obj = e.object().map_err(err(format!("reading {path}")))?;
            Ok(Some(obj.data.clone()))
        }
        None => Ok(None),
    }
}

/// The id git gives a file of `bytes` (its blob's), whether or not it is stored.
pub(crate) fn blob_hash(bytes: &[u8]) -> Option<ObjectId> {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes).ok()
}

/// The blob id of `path` in `commit`, if it exists there (without reading the blob).
pub(crate) fn blob_id_at(repo: &gix::Repository, commit: ObjectId, path: &str) -> Option<ObjectId> {
    repo.find_commit(commit)
        .ok()?
        .tree()
        .ok()?
        .lookup_entry_by_path(path)
        .ok()?
        .map(|e| e.object_id())
}

/// How a file of the work tree differs from a commit's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Difference {
    /// Both have it, with other bytes: the blob of those on disk.
    Changed(ObjectId),
    /// The commit has it; the work tree does not.
    Gone,
    /// The work tree has it, this blob; the commit does not.
    New(ObjectId),
}

impl Difference {
    /// The word for it: `changed`, `deleted`, `new`.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Self::Changed(_) => "changed",
            Self::Gone => "deleted",
            Self::New(_) => "new",
        }
    }

    /// The blob on disk, or `None` where the file is gone.
    pub(crate) fn on_disk(self) -> Option<ObjectId> {
        match self {
            Self::Changed(id) | Self::New(id) => Some(id),
            Self::Gone => None,
        }
    }
}

/// The files under the top-level folder `dir` whose bytes on disk are not `commit`'s, by slash-separated
/// path, sorted; `keep` says which files of the folder count (others are neither compared nor said).
/// Every file is hashed, as a commit of the folder would: a stat cache would not do, since CommiTea's
/// index holds no stat data.
pub(crate) fn differences(
    repo: &gix::Repository,
    commit: ObjectId,
    dir: &str,
    keep: impl Fn(&str) -> bool + Sync,
) -> Result<Vec<(String, Difference)>, GitError> {
    use rayon::prelude::*;
    let workdir = repo.workdir().ok_or_else(|| GitError {
        what: "comparing the work tree".into(),
        source: "the state repo is bare".into(),
    })?;
    let mut committed: std::collections::BTreeMap<String, ObjectId> = Default::default();
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(err(format!("reading the tree of {commit}")))?;
    if let Some(entry) = tree
        .lookup_entry_by_path(dir)
        .map_err(err(format!("looking up {dir}")))?
    {
        let mut todo = vec![(dir.to_owned(), entry.object_id())];
        while let Some((at, id)) = todo.pop() {
            let sub = repo.find_tree(id).map_err(err(format!("reading {at}")))?;
            for e in sub.decode().map_err(err(format!("decoding {at}")))?.entries {
                let path = format!("{at}/{}", e.filename);
                if e.mode.is_tree() {
                    todo.push((path, e.oid.to_owned()));
                } else if keep(&path) {
                    committed.insert(path, e.oid.to_owned());
                }
            }
        }
    }
    // A link is compared as git stores one, by where it points; none is followed (a linked folder would
    // have this read files outside the state repo).
    let on_disk: Vec<String> = walkdir::WalkDir::new(workdir.join(dir))
        .follow_root_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() || (e.depth() > 0 && e.path_is_symlink()))
        .filter_map(|e| {
            let rel = e
                .path()
                .strip_prefix(workdir)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            (!rel.ends_with(super::TMP_SUFFIX) && keep(&rel)).then_some(rel)
        })
        .collect();
    let hash = repo.object_hash();
    let mut out: Vec<(String, Difference)> = on_disk
        .par_iter()
        .map(|rel| -> Result<Option<(String, Difference)>, GitError> {
            let path = workdir.join(rel);
            let bytes = match std::fs::read_link(&path) {
                Ok(to) => to.to_string_lossy().into_owned().into_bytes(),
                Err(_) => std::fs::read(&path).map_err(err(format!("reading {rel}")))?,
            };
            // Compared as a commit would store it.
            let id =
                gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &as_committed(rel, bytes))
                    .map_err(err(format!("hashing {rel}")))?;
            Ok(match committed.get(rel) {
                Some(c) if *c == id => None,
                Some(_) => Some((rel.clone(), Difference::Changed(id))),
                None => Some((rel.clone(), Difference::New(id))),
            })
        })
        .filter_map(Result::transpose)
        .collect::<Result<_, _>>()?;
    let seen: std::collections::HashSet<&str> = on_disk.iter().map(String::as_str).collect();
    out.extend(
        committed
            .keys()
            .filter(|p| !seen.contains(p.as_str()))
            .map(|p| (p.clone(), Difference::Gone)),
    );
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Commits `edits` — path (slash-separated) to new bytes, or `None` to remove it — on top of `parent`'s
/// tree, as a commit whose parent is `parent`; moves no ref and touches no file. A proposal's branch is
/// built this way, so the checkout stays as it is.
pub fn commit_onto(
    repo: &gix::Repository,
    parent: ObjectId,
    edits: &[Edit],
    message: &str,
    sig: &Signature,
) -> Result<ObjectId, GitError> {
    let tree_id = repo
        .find_commit(parent)
        .and_then(|c| c.tree_id())
        .map_err(err(format!("reading the tree of {parent}")))?
        .detach();
    let tree = edit(repo, tree_id, edits)?;
    let actor = gix::actor::Signature {
        name: BString::from(sig.name.as_str()),
        email: BString::from(sig.email.as_str()),
        time: gix::date::Time::new(sig.time.timestamp(), 0),
    };
    let mut buf = gix::date::parse::TimeBuf::default();
    let sref = actor.to_ref(&mut buf);
    let commit = gix::objs::Commit {
        tree,
        parents: vec![parent].into(),
        author: sref.into(),
        committer: sref.into(),
        encoding: None,
        // A closing keyword's reference acts once pushed (`crate::gitea::inert_refs`).
        message: crate::gitea::inert_refs(message).into(),
        extra_headers: Vec::new(),
    };
    Ok(repo
        .write_object(&commit)
        .map_err(err("writing the commit"))?
        .detach())
}

/// Someone named as a commit's author or co-author.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    /// Name.
    pub name: String,
    /// E-mail.
    pub email: String,
}

impl std::fmt::Display for Author {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <{}>", self.name, self.email)
    }
}

/// Who besides `sig` wrote the commits of `tip` that `base` does not have (in the order met from the
/// tip, once each), with the co-authors their messages credit (`Co-authored-by: Name <email>` trailers,
/// git's convention for a commit of several hands): a proposal branch rebuilt on its base keeps their
/// credit. At most 500 commits are walked.
pub fn other_authors(
    repo: &gix::Repository,
    base: ObjectId,
    tip: ObjectId,
    sig: &Signature,
) -> Result<Vec<Author>, GitError> {
    const MOST: usize = 500;
    let mut out: Vec<Author> = Vec::new();
    let mut todo = vec![tip];
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = todo.pop() {
        if seen.len() >= MOST || !seen.insert(id) || is_ancestor(repo, id, base) {
            continue;
        }
        let commit = repo
            .find_commit(id)
            .map_err(err(format!("reading commit {id}")))?;
        let author = commit
            .author()
            .map_err(err(format!("reading the author of {id}")))?;
        let mut names = vec![Author {
            name: author.name.to_string(),
            email: author.email.to_string(),
        }];
        let message = commit.message_raw_sloppy().to_string();
        names.extend(message.lines().filter_map(|l| {
            let (name, email) = l
                .strip_prefix("Co-authored-by:")?
                .trim()
                .strip_suffix('>')?
                .rsplit_once(" <")?;
            Some(Author {
                name: name.trim().to_owned(),
                email: email.to_owned(),
            })
        }));
        for a in names {
            let ours = a.name == sig.name && a.email == sig.email;
            if !ours && !out.contains(&a) {
                out.push(a);
            }
        }
        todo.extend(commit.parent_ids().map(|p| p.detach()));
    }
    Ok(out)
}

/// The names of the entries of the folder `dir` (slash-separated) in `commit`; empty when it has none.
pub fn list_dir(
    repo: &gix::Repository,
    commit: ObjectId,
    dir: &str,
) -> Result<Vec<String>, GitError> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(err(format!("reading the tree of {commit}")))?;
    let Some(entry) = tree
        .lookup_entry_by_path(dir)
        .map_err(err(format!("looking up {dir}")))?
    else {
        return Ok(Vec::new());
    };
    let object = entry.object().map_err(err(format!("reading {dir}")))?;
    let Ok(sub) = object.try_into_tree() else {
        return Ok(Vec::new());
    };
    let decoded = sub.decode().map_err(err(format!("decoding {dir}")))?;
    Ok(decoded
        .entries
        .iter()
        .map(|e| e.filename.to_string())
        .collect())
}

/// When `commit` was committed.
pub fn commit_time(repo: &gix::Repository, commit: ObjectId) -> Result<DateTime<Utc>, GitError> {
    let secs = repo
        .find_commit(commit)
        .map_err(err(format!("reading commit {commit}")))?
        .time()
        .map_err(err(format!("reading the time of {commit}")))?
        .seconds;
    Ok(DateTime::from_timestamp(secs, 0).unwrap_or_default())
}

/// Commits the folder `dir` as the whole tree of a commit on top of `parent` (none: the first commit of
/// its branch); moves no ref. `None` when `parent` already has exactly that tree.
pub fn commit_dir(
    repo: &gix::Repository,
    dir: &Path,
    parent: Option<ObjectId>,
    message: &str,
    sig: &Signature,
) -> Result<Option<ObjectId>, GitError> {
    let mut objects = NewObjects::new(repo);
    let tree = match entry_for(&mut objects, dir, "site", &mut Vec::new())? {
        Some(e) => e.oid,
        None => objects.tree(gix::objs::Tree::empty())?,
    };
    objects.finish()?;
    if let Some(p) = parent {
        let old = repo
            .find_commit(p)
            .and_then(|c| c.tree_id())
            .map_err(err(format!("reading the tree of {p}")))?;
        if old == tree {
            return Ok(None);
        }
    }
    let actor = gix::actor::Signature {
        name: BString::from(sig.name.as_str()),
        email: BString::from(sig.email.as_str()),
        time: gix::date::Time::new(sig.time.timestamp(), 0),
    };
    let mut buf = gix::date::parse::TimeBuf::default();
    let sref = actor.to_ref(&mut buf);
    let commit = gix::objs::Commit {
        tree,
        parents: parent.into_iter().collect(),
        author: sref.into(),
        committer: sref.into(),
        encoding: None,
        // A closing keyword's reference acts once pushed (`crate::gitea::inert_refs`).
        message: crate::gitea::inert_refs(message).into(),
        extra_headers: Vec::new(),
    };
    Ok(Some(
        repo.write_object(&commit)
            .map_err(err("writing the commit"))?
            .detach(),
    ))
}

/// `tree` with `edits` made: path (slash-separated) to new bytes, or `None` to remove it.
fn edit(repo: &gix::Repository, tree: ObjectId, edits: &[Edit]) -> Result<ObjectId, GitError> {
    let mut editor = repo.edit_tree(tree).map_err(err("starting a tree edit"))?;
    for (path, bytes) in edits {
        match bytes {
            Some(b) => {
                let blob = repo
                    .write_blob(b)
                    .map_err(err(format!("writing {path}")))?
                    .detach();
                editor
                    .upsert(path.as_str(), EntryKind::Blob, blob)
                    .map_err(err(format!("adding {path}")))?;
            }
            None => {
                editor
                    .remove(path.as_str())
                    .map_err(err(format!("removing {path}")))?;
            }
        }
    }
    Ok(editor
        .write()
        .map_err(err("writing the edited tree"))?
        .detach())
}

/// The full names of the repository's references (`refs/remotes/origin/commitea/C-0004`, …), whatever
/// they point at; none when they cannot be read.
pub fn reference_names(repo: &gix::Repository) -> Vec<String> {
    let Ok(platform) = repo.references() else {
        return Vec::new();
    };
    let Ok(all) = platform.all() else {
        return Vec::new();
    };
    all.filter_map(Result::ok)
        .map(|r| r.name().as_bstr().to_string())
        .collect()
}

/// The commit a reference (`refs/remotes/origin/main`, `HEAD`, a hex id) names, if it exists.
pub fn resolve(repo: &gix::Repository, name: &str) -> Option<ObjectId> {
    repo.rev_parse_single(name)
        .ok()
        .and_then(|id| id.object().ok()?.peel_to_commit().ok())
        .map(|c| c.id)
}

/// The commits of a shallow checkout whose parents it lacks (`.git/shallow`); empty for a whole history.
fn shallow_boundary(repo: &gix::Repository) -> Vec<ObjectId> {
    repo.shallow_commits()
        .ok()
        .flatten()
        .map(|c| c.iter().copied().collect())
        .unwrap_or_default()
}

/// A commit's first parent: `None` at the root, and at the boundary of a shallow checkout, whose parent
/// is not in it (audit 103: `fetch-depth: 1` made every run fail on "object not found").
fn first_parent(commit: &gix::Commit<'_>, boundary: &[ObjectId]) -> Option<ObjectId> {
    if boundary.contains(&commit.id) {
        return None;
    }
    commit.parent_ids().next().map(|p| p.detach())
}

/// What a shallow checkout says when the history it lacks is needed: what for, and how to fetch it.
pub fn shallow_error(what: impl Into<String>) -> GitError {
    GitError {
        what: what.into(),
        source: "the checkout is shallow and the commit is beyond its history: CommiTea reads the state \
                 repo's whole history (which merge approved an op file); check it out whole \
                 (actions/checkout with fetch-depth: 0, as the workflow `commitea init` writes) or run \
                 `git fetch --unshallow`"
            .into(),
    }
}

/// The commit that brought `path` as `tip` has it to the first-parent line ending at `tip`: walking back
/// from `tip`, the last commit that still has it with the same content; with the commits walked past on
/// the way (newest first, `tip` first). `None` when `tip` does not have it. A file changed after it came
/// was brought by the change: the approval of an op file is of what it says (audit 94: a merged file
/// edited by a straight push was carried out under the pull request that approved the first text).
pub fn introduced(
    repo: &gix::Repository,
    tip: ObjectId,
    path: &str,
) -> Result<Option<(ObjectId, Vec<ObjectId>)>, GitError> {
    let Some(content) = read_at(repo, tip, path)? else {
        return Ok(None);
    };
    let boundary = shallow_boundary(repo);
    let mut walked = Vec::new();
    let mut found = None;
    let mut next = Some(tip);
    while let Some(id) = next {
        if read_at(repo, id, path)?.as_ref() != Some(&content) {
            break;
        }
        if let Some(before) = found.replace(id) {
            walked.push(before);
        }
        let commit = repo
            .find_commit(id)
            .map_err(err(format!("reading commit {id}")))?;
        next = first_parent(&commit, &boundary);
        // The file may have come before the boundary: the commit that brought it, and so its approval,
        // is not in the checkout.
        if next.is_none() && boundary.contains(&id) {
            return Err(shallow_error(format!(
                "finding the commit that brought {path}"
            )));
        }
    }
    Ok(found.map(|f| (f, walked)))
}

/// Packs the loose objects of the repository at `dir` when git's own threshold says so (`git gc --auto`,
/// `gc.auto`, 6,700 loose objects by default), in the foreground: gix writes commits but never packs, so
/// a checkout that stays on disk (a PM's, a runner's workspace) gathered every run's objects loose (audit
/// 103: 1,927 after 63 runs, 17 MB where packed they were 2 MB). Best effort: without git, or failing, it
/// is said in the debug log and the run goes on.
pub fn tidy(dir: &Path) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => tracing::debug!(
            "git gc --auto: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => tracing::debug!("git gc --auto not run: {e}"),
    }
}

/// Whether `ancestor` is `descendant` or one of its ancestors.
pub fn is_ancestor(repo: &gix::Repository, ancestor: ObjectId, descendant: ObjectId) -> bool {
    if ancestor == descendant {
        return true;
    }
    repo.merge_base(ancestor, descendant)
        .is_ok_and(|b| b.is_some_and(|b| b.detach() == ancestor))
}

/// The first-parent history from `HEAD`, newest first, read as it is walked: a reader that stops at the
/// first commits it needs does not read a long history whole. A commit that does not read ends it.
pub(crate) fn first_parents(repo: &gix::Repository) -> impl Iterator<Item = ObjectId> + '_ {
    first_parents_from(repo, head(repo))
}

/// The first-parent history from `start`, newest first, as [`first_parents`] walks it.
pub(crate) fn first_parents_from(
    repo: &gix::Repository,
    start: Option<ObjectId>,
) -> impl Iterator<Item = ObjectId> + '_ {
    let boundary = shallow_boundary(repo);
    let mut next = start;
    std::iter::from_fn(move || {
        let id = next?;
        next = repo
            .find_commit(id)
            .ok()
            .and_then(|c| first_parent(&c, &boundary));
        Some(id)
    })
}

/// The first line of `commit`'s message.
pub(crate) fn subject(repo: &gix::Repository, commit: ObjectId) -> Option<String> {
    let c = repo.find_commit(commit).ok()?;
    let message = c.message_raw_sloppy().to_string();
    message.lines().next().map(str::to_owned)
}

/// The first parent chain from `HEAD`, newest first, with each commit's time; in a shallow checkout, to
/// its boundary.
pub(crate) fn first_parent_history(
    repo: &gix::Repository,
) -> Result<Vec<(ObjectId, i64)>, GitError> {
    let boundary = shallow_boundary(repo);
    let mut out = Vec::new();
    let mut next = head(repo);
    while let Some(id) = next {
        let commit = repo
            .find_commit(id)
            .map_err(err(format!("reading commit {id}")))?;
        let time = commit
            .time()
            .map(|t| t.seconds)
            .map_err(err(format!("reading the time of {id}")))?;
        out.push((id, time));
        next = first_parent(&commit, &boundary);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn sig(secs: i64) -> Signature {
        Signature {
            name: "CommiTea".into(),
            email: "bot@example.com".into(),
            time: Utc.timestamp_opt(secs, 0).single().unwrap_or_default(),
        }
    }

    #[test]
    fn a_stray_file_under_snapshot_is_not_committed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        let issues = dir.path().join("snapshot/issues/acme/api");
        std::fs::create_dir_all(&issues).unwrap();
        std::fs::write(dir.path().join("snapshot/meta.yaml"), "a: 1\n").unwrap();
        std::fs::write(issues.join("6.yaml"), "n: 6\n").unwrap();
        std::fs::write(issues.join("6.yaml.bak"), "n: 5\n").unwrap();
        std::fs::write(dir.path().join("snapshot/notes.txt"), "mine\n").unwrap();
        std::fs::create_dir_all(dir.path().join("forecast")).unwrap();
        std::fs::write(dir.path().join("forecast/forecast.json"), "{}\n").unwrap();
        let id = commit_paths(&repo, OWNED_PATHS, &[], "run", &sig(1_700_000_000))
            .unwrap()
            .unwrap();
        let tree = repo.find_commit(id).unwrap().tree().unwrap();
        let has = |p: &str| tree.lookup_entry_by_path(p).unwrap().is_some();
        assert!(has("snapshot/meta.yaml") && has("snapshot/issues/acme/api/6.yaml"));
        assert!(has("forecast/forecast.json"));
        assert!(!has("snapshot/notes.txt") && !has("snapshot/issues/acme/api/6.yaml.bak"));
        // Left on disk: they are the user's.
        assert!(dir.path().join("snapshot/notes.txt").exists());
        assert!(crate::state::snapshot::is_snapshot_file(
            "snapshot/issues/a/b/1.yaml"
        ));
        assert!(!crate::state::snapshot::is_snapshot_file(
            "snapshot/issues/a/1.yaml"
        ));
        assert!(!crate::state::snapshot::is_snapshot_file(
            "snapshot/meta.yaml.orig"
        ));
    }

    #[test]
    fn a_run_with_nothing_to_commit_brings_an_index_left_behind_by_a_kill_up_to_head() {
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("snapshot")).unwrap();
        std::fs::write(dir.path().join("snapshot/meta.yaml"), "a: 1\n").unwrap();
        let first = commit_all(&repo, &["public"], "init", &sig(1_700_000_000))
            .unwrap()
            .unwrap();
        std::fs::write(dir.path().join("snapshot/meta.yaml"), "a: 2\n").unwrap();
        commit_paths(&repo, OWNED_PATHS, &[], "run", &sig(1_700_000_100))
            .unwrap()
            .unwrap();
        // A run killed after moving HEAD but before writing the index leaves the index at the old tree.
        let old_tree = repo.find_commit(first).unwrap().tree_id().unwrap().detach();
        let mut stale = repo.index_from_tree(&old_tree).unwrap();
        stale.write(Default::default()).unwrap();
        let repo = gix::open(dir.path()).unwrap();
        // The next run has nothing to commit, and leaves the index as HEAD is.
        assert!(
            commit_paths(&repo, OWNED_PATHS, &[], "again", &sig(1_700_000_200))
                .unwrap()
                .is_none()
        );
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(dir.path())
            .output()
            .expect("git is needed for this test");
        assert_eq!(String::from_utf8_lossy(&status.stdout), "");
    }

    #[test]
    fn commits_owned_paths_only_and_skips_empty_changes() {
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("snapshot/issues")).unwrap();
        std::fs::write(dir.path().join("snapshot/meta.yaml"), "a: 1\n").unwrap();
        std::fs::write(dir.path().join("README.md"), "hi\n").unwrap();
        let first = commit_all(&repo, &["public"], "init", &sig(1_700_000_000))
            .unwrap()
            .unwrap();
        assert!(
            commit_all(&repo, &["public"], "again", &sig(1_700_000_100))
                .unwrap()
                .is_none()
        );

        std::fs::write(dir.path().join("README.md"), "changed but not owned\n").unwrap();
        std::fs::write(dir.path().join("snapshot/meta.yaml"), "a: 2\n").unwrap();
        let second = commit_paths(&repo, OWNED_PATHS, &[], "run", &sig(1_700_000_200))
            .unwrap()
            .unwrap();
        assert_ne!(first, second);
        assert_eq!(
            read_at(&repo, second, "README.md").unwrap().unwrap(),
            b"hi\n"
        );
        assert_eq!(
            read_at(&repo, second, "snapshot/meta.yaml")
                .unwrap()
                .unwrap(),
            b"a: 2\n"
        );
        assert_eq!(
            read_at(&repo, first, "snapshot/meta.yaml")
                .unwrap()
                .unwrap(),
            b"a: 1\n"
        );
        assert!(read_at(&repo, second, "nope").unwrap().is_none());
        let hist = first_parent_history(&repo).unwrap();
        assert_eq!(hist, vec![(second, 1_700_000_200), (first, 1_700_000_000)]);
    }

    /// The loose objects and packs under the repository's object database.
    fn object_files(dir: &Path) -> (usize, usize) {
        let objects = dir.join(".git/objects");
        let packs = std::fs::read_dir(objects.join("pack"))
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".pack"))
                })
                .count()
            })
            .unwrap_or(0);
        let loose = walkdir::WalkDir::new(&objects)
            .min_depth(2)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_type().is_file()
                    && e.path()
                        .parent()
                        .and_then(Path::file_name)
                        .is_some_and(|n| n.len() == 2)
            })
            .count();
        (loose, packs)
    }

    #[test]
    fn a_commit_of_many_new_files_writes_one_pack_and_a_few_changes_stay_loose() {
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        let issues = dir.path().join("snapshot/issues/acme/api");
        std::fs::create_dir_all(&issues).unwrap();
        for n in 0..300 {
            std::fs::write(issues.join(format!("{n}.yaml")), format!("issue {n}\n")).unwrap();
        }
        // Two files with the same bytes are one object.
        std::fs::write(issues.join("copy.yaml"), "issue 7\n").unwrap();
        // One larger than the compressor's output buffer, so its stream is written in several steps.
        let big: String = (0..40_000u64)
            .map(|i| format!("{:x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40))
            .collect::<Vec<_>>()
            .join(",");
        std::fs::write(issues.join("big.yaml"), &big).unwrap();
        let first = commit_paths(&repo, OWNED_PATHS, &[], "first", &sig(1_700_000_000))
            .unwrap()
            .unwrap();
        // 302 blobs, four trees, the ops folder's nothing: one pack, not kept from `git gc`; only the commit
        // is loose.
        assert_eq!(object_files(dir.path()), (1, 1));
        let kept = std::fs::read_dir(dir.path().join(".git/objects/pack"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".keep")
            })
            .count();
        assert_eq!(kept, 0);
        assert_eq!(
            read_at(&repo, first, "snapshot/issues/acme/api/299.yaml")
                .unwrap()
                .unwrap(),
            b"issue 299\n"
        );
        assert_eq!(
            read_at(&repo, first, "snapshot/issues/acme/api/big.yaml")
                .unwrap()
                .unwrap(),
            big.as_bytes()
        );

        // A later run opens the repository afresh: the pack is found, its objects not written again.
        let repo = gix::open(dir.path()).unwrap();
        std::fs::write(issues.join("3.yaml"), "issue 3, edited\n").unwrap();
        std::fs::remove_file(issues.join("4.yaml")).unwrap();
        let second = commit_paths(&repo, OWNED_PATHS, &[], "second", &sig(1_700_000_100))
            .unwrap()
            .unwrap();
        // The edited blob, five trees (api, acme, issues, snapshot, root) and the commit join the first
        // commit as loose objects; no second pack.
        assert_eq!(object_files(dir.path()), (8, 1));
        assert_eq!(
            read_at(&repo, second, "snapshot/issues/acme/api/3.yaml")
                .unwrap()
                .unwrap(),
            b"issue 3, edited\n"
        );
        assert!(
            read_at(&repo, second, "snapshot/issues/acme/api/4.yaml")
                .unwrap()
                .is_none()
        );

        // git itself reads it all: the pack is whole and the work tree matches the commit.
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("git is required by CommiTea (push and fetch)");
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        git(&["fsck", "--strict", "--no-dangling"]);
        assert_eq!(git(&["status", "--porcelain"]), "");
        assert_eq!(
            git(&[
                "show",
                &format!("{first}:snapshot/issues/acme/api/copy.yaml")
            ]),
            "issue 7\n"
        );
    }
}
