/// `ireporter copy-photos-to-s3`: the move from one host's upload folder to
/// a bucket. Every photo file the folder's store wrote (`<IdPhoto>.jpg`,
/// `<IdPhoto>-thumb.jpg`, the tree's sizes) is PUT under the key
/// `S3PhotoFileStore` reads it from, unless the bucket has it already: a
/// run stopped or failed midway goes on where it was, and running it again
/// after the last uploads to the folder copies only those. Nothing is
/// deleted; spool files and `.removed/` stay behind.
struct FolderToBucketCopy {
    struct Report: Equatable {
        var copied = 0
        var present = 0
    }

    /// Ended by a stop request (`TaskProgress`): what was copied is whole.
    struct Stopped: Error {
        var report: Report
    }

    let folder: UploadFolder
    let bucket: S3PhotoFileStore

    func run(progress: TaskProgress?) throws -> Report {
        var keys: [String] = []
        try forEachDirectoryEntry(folder.directory) { name, _ in
            if UploadFolder.photoFile(name) != nil { keys.append("upload/\(name)") }
        }
        try folder.tree.forEachFile { _, path in keys.append(path) }
        var report = Report()
        for (done, key) in keys.sorted().enumerated() {
            if progress?.stopRequested == true { throw Stopped(report: report) }
            progress?.update("copying photo files", done: done, of: keys.count)
            if try bucket.client.exists(key) {
                report.present += 1
                continue
            }
            let path = "\(folder.directory)/" + (key.hasPrefix("upload/") ? String(key.dropFirst("upload/".count)) : key)
            // A file removed since the listing (a delete) is not copied.
            guard let bytes = readFile(path) else { continue }
            try bucket.client.put(key, bytes)
            report.copied += 1
        }
        progress?.finish("photo files copied", done: report.copied, of: keys.count)
        return report
    }
}
