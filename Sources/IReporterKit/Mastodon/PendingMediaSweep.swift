#if canImport(Glibc)
import Glibc
#endif

/// Media never posted go after a day (`MediaEndpoints.pendingSeconds`), as
/// Mastodon sweeps them: their rows with their files, a few at each media
/// upload and all of them in the supervisor's periodic sweep (so that a
/// server nobody uploads to still forgets them). Files no row names (a
/// worker killed between a media's file and its row, another host's row
/// swept) go once their age shows they outlived any row.
struct PendingMediaSweep {
    let media: any MediaStore
    let spoolDirectory: String
    /// Unix seconds.
    let now: Int64

    /// Removes up to `limit` media waiting longer than a day, with their
    /// files; how many it removed.
    @discardableResult
    func removeStale(limit: Int) throws -> Int {
        let stale = try media.pendingCreated(before: now - MediaEndpoints.pendingSeconds, limit: limit)
        for pending in stale {
            MediaEndpoints.removeFile(of: pending.file, in: spoolDirectory)  // and its second name: a post's worker killed
            try media.removePending(id: pending.id)
        }
        return stale.count
    }

    /// Every stale media, then the files of this host's spool area older
    /// than any media's row (a day, and an hour for a clock that moved):
    /// how many rows and files it removed.
    func run() throws -> (media: Int, files: Int) {
        var removed = 0
        // Bounded: a table of millions is finished by the next sweeps.
        for _ in 0..<100 {
            let count = try removeStale(limit: 500)
            removed += count
            if count < 500 { break }
        }
        var files = 0
        let oldest = now - MediaEndpoints.pendingSeconds - 3600
        try forEachDirectoryEntry(spoolDirectory) { name, _ in
            var info = stat()
            guard name.hasPrefix(MediaEndpoints.filePrefix), lstat("\(spoolDirectory)/\(name)", &info) == 0,
                  Int64(info.st_mtim.tv_sec) < oldest, unlink("\(spoolDirectory)/\(name)") == 0 else { return }
            files += 1
        }
        return (removed, files)
    }
}
