#if canImport(Glibc)
import Glibc
#endif

/// `/api/v1/media` and `/api/v2/media`: a photo is checked when it
/// arrives, by `upload`'s own code (`PhotoIntake`: decoded whole, within
/// the pixel and memory limits, its metadata stripped; a PNG or HEIC made
/// a JPEG first), and kept as a pending media (`MediaStore`, its file in
/// the upload folder's spool area) until a status posts it through
/// `upload` (`publish`). Media never posted are swept after a day, as
/// Mastodon sweeps them. The description is the photo's alt text. Until
/// it is posted, a media's file is served at a URL named by a random key
/// (`…/media/<id>/<key>.jpg`): clients show it, and wait for a `url`.
///
/// A media's id: a photo's IdPhoto once posted; a pending one's is
/// `pendingBase` + its row's id, so that the two never meet.
struct MediaEndpoints: MastodonEndpoints {
    static let pendingBase: Int64 = 1_000_000_000_000_000
    /// How many media one person may have waiting (each was a decode).
    static let maxPending = 20
    /// How long a media waits for its status before it is swept.
    static let pendingSeconds: Int64 = 86_400
    /// Mastodon's limit of a description (alt text), in characters; here bytes of UTF-8.
    static let maxDescriptionBytes = 1500
    /// A waiting media's name (the row's `file`): this, then its key (20 hex
    /// digits); its file's name: this, then a digest of that (`filePath`).
    static let filePrefix = ".media-"
    /// A media's file while a post of it runs: its second name, to wait again from.
    static let heldSuffix = ".held"

    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        for path in ["/api/v1/media", "/api/v2/media"] {
            router.add(.post, path, scope: OAuthScope("write:media")) { call in try upload(call, api: api) }
        }
        router.add(.get, "/api/v1/media/:id", scope: OAuthScope("write:media")) { call in
            let statuses = MastodonStatuses(call, api: api)
            return .json(try media(call, statuses: statuses).json(links: statuses.links))
        }
        router.add(.get, "/api/v1/media/:id/:file", scope: nil) { call in
            let id = try call.id()
            guard id > Self.pendingBase, let pending = try api.services.media.pending(id: id - Self.pendingBase),
                  call.pathParameter("file") == Self.key(of: pending) + ".jpg",
                  let jpeg = readFile(Self.filePath(of: pending.file, in: api.services.photoFiles.spoolDirectory))
            else { throw MastodonError.notFound }
            return MastodonAnswer(contentType: "image/jpeg",
                                  headers: [("Cache-Control", "private, max-age=86400"),
                                            ("Content-Security-Policy", "default-src 'none'; sandbox")], body: jpeg)
        }
        router.add(.put, "/api/v1/media/:id", scope: OAuthScope("write:media")) { call in
            let statuses = MastodonStatuses(call, api: api)
            let found = try media(call, statuses: statuses)
            let description = try Self.description(call.parameters)
            let focus = try Self.focus(call.parameters) ?? found.focus
            let user = try call.user()
            if case .pending = found.source {
                try api.services.media.updatePending(id: found.id - Self.pendingBase, userID: user.id,
                                                     description: description ?? found.description, focusX: focus?.x, focusY: focus?.y)
            } else if let description {
                try api.services.media.setDescription(description, ofPhoto: found.id)
                // The kept renderings of timelines show descriptions.
                api.services.counters.noteStreamChanged()
            }
            return .json(try media(call, statuses: statuses).json(links: statuses.links))
        }
    }

    /// The caller's media the path names: pending, or a photo of theirs.
    private func media(_ call: MastodonCall, statuses: MastodonStatuses) throws -> MediaAttachmentEntity {
        let user = try call.user()
        let id = try call.id()
        if id > Self.pendingBase {
            guard let pending = try statuses.services.media.pending(id: id - Self.pendingBase), pending.userID == user.id else {
                throw MastodonError.notFound
            }
            return Self.entity(pending)
        }
        guard let photo = try statuses.photo(id), photo.account.id == user.id, let media = photo.media else { throw MastodonError.notFound }
        return media
    }

    static func key(of pending: PendingMedia) -> String { String(pending.file.dropFirst(filePrefix.count)) }

    /// Where the media named `name` (its row's `file`) waits: a file named by
    /// a digest of the name, never the name itself, as anyone on the host may
    /// list the upload folder and the key in a name is all its picture's URL
    /// asks for. A file an older version named by the key is renamed so here.
    static func filePath(of name: String, in directory: String) -> String {
        let path = "\(directory)/\(filePrefix)\(Digest.sha256.hexString(Array(name.utf8)).prefix(40))"
        if access(path, F_OK) != 0 { _ = rename("\(directory)/\(name)", path) }
        return path
    }

    /// Removes the media's file, and its second name of a post under way
    /// (an older version's too).
    static func removeFile(of name: String, in directory: String) {
        let path = filePath(of: name, in: directory)
        for file in [path, path + heldSuffix, "\(directory)/\(name)\(heldSuffix)"] { unlink(file) }
    }

    static func entity(_ pending: PendingMedia) -> MediaAttachmentEntity {
        MediaAttachmentEntity(id: pendingBase + pending.id, source: .pending(key: key(of: pending)), width: pending.width, height: pending.height,
                              description: pending.description,
                              focus: pending.focusX.flatMap { x in pending.focusY.map { (x: x, y: $0) } })
    }

    private func upload(_ call: MastodonCall, api: MastodonAPI) throws -> MastodonAnswer {
        let user = try call.user()
        let services = api.services
        guard let file = call.parameters.file("file"), let spool = file.spoolPath else {
            throw MastodonError(status: 422, message: "Validation failed: File can't be blank")
        }
        let description = try Self.description(call.parameters)
        let focus = try Self.focus(call.parameters)
        try PendingMediaSweep(media: services.media, spoolDirectory: services.photoFiles.spoolDirectory, now: services.now())
            .removeStale(limit: 8)
        let tooMany = MastodonError(status: 422, message: "Validation failed: \(Self.maxPending) photos are waiting for a post already")
        // Checked before the photo's work too, as most uploads past the limit can be refused at once.
        guard try services.media.pendingCount(userID: user.id) < Self.maxPending else { throw tooMany }
        // Each is a decode of up to max_image_pixels that may never be posted,
        // as a `preview` is (one that fails stores nothing, so the count of
        // waiting media never stops it): preview's hourly limit, before the work.
        let limit = PreviewCommand.rateLimit
        do {
            try limit.charge(user, perHour: limit.perHour(services.policy), counters: services.counters)
        } catch is PreviewCommand.Failure {
            throw MastodonError(status: 429, message: "Too many photos uploaded, please try again later")
        }
        let context = call.commandContext()
        defer { context.removeTemporaryFiles() }
        let jpeg = try jpegFile(spool, services: services, context: context)
        let prepared: PhotoIntake.Prepared
        do {
            prepared = try PhotoIntake(services).prepare(spool: jpeg, effect: nil, in: context)
        } catch {
            throw MastodonError(error)
        }
        let waiting = PendingMedia(userID: user.id, file: "", width: prepared.width, height: prepared.height,
                                   description: description, focusX: focus?.x, focusY: focus?.y, created: services.now())
        guard let kept = try Self.keep(prepared.photoPath, as: waiting, services: services, context: context) else { throw tooMany }
        return .json(Self.entity(kept).json(links: MastodonLinks(siteURL: call.request.siteURL)))
    }

    /// Puts the JPEG at `path` (this request's spool file) in place as
    /// `waiting`'s file, under a new random key, and lists it: the media;
    /// nil (the file removed) when `maxPending` of the user's wait already.
    private static func keep(_ path: String, as waiting: PendingMedia, services: AppServices,
                             context: CommandContext) throws -> PendingMedia? {
        let directory = services.photoFiles.spoolDirectory
        let name = filePrefix + "\(PhotoSecret.random())\(PhotoSecret.random())"
        let file = filePath(of: name, in: directory)
        do {
            guard rename(path, file) == 0 else { throw SystemError("rename to \(file)") }
            context.keep(path)
            try PhotoTree.sync(file)
            try PhotoTree.sync(directory)
        } catch {
            Log.error("media upload: \(error)")
            unlink(file)  // no row will name it
            throw MastodonError.unavailable
        }
        var kept = waiting
        kept.file = name
        do {
            guard let id = try services.media.addPending(kept, limit: maxPending) else {
                unlink(file)
                return nil
            }
            kept.id = id
        } catch PhotoStoreError.accountRemoved {
            unlink(file)
            throw MastodonError.invalidToken // deleted while the media was on its way: as its token gone
        } catch {
            unlink(file) // no row would ever sweep it
            throw error
        }
        return kept
    }

    /// For "delete & re-draft": a copy of the photo a status deletes,
    /// waiting as a media of its owner's, for the app to post again with
    /// the caption it keeps (Mastodon keeps a deleted status's media so).
    /// Nil, with the reason logged, when none can be kept (the limit of
    /// waiting media, the file unreadable): the status is deleted all the same.
    static func redraftCopy(of media: MediaAttachmentEntity, userID: Int64, services: AppServices,
                            context: CommandContext) -> MediaAttachmentEntity? {
        guard case .photo(let id, let secret) = media.source else { return nil }
        do {
            guard let jpeg = try services.photoFiles.original(id: id, secret: secret) else { return nil }
            let spool = try spooled(jpeg, services: services, context: context)
            let waiting = PendingMedia(userID: userID, file: "", width: media.width ?? 0, height: media.height ?? 0,
                                       description: media.description, focusX: media.focus?.x, focusY: media.focus?.y,
                                       created: services.now())
            guard let kept = try keep(spool, as: waiting, services: services, context: context) else {
                Log.info("photo \(id) deleted without a copy to re-draft: \(maxPending) media of its owner's wait already")
                return nil
            }
            return entity(kept)
        } catch {
            Log.error("photo \(id) deleted without a copy to re-draft: \(error)")
            return nil
        }
    }

    /// Removes a media listed and kept for a post that is not made.
    static func forget(_ media: MediaAttachmentEntity, services: AppServices) {
        guard media.id > pendingBase, let pending = try? services.media.pending(id: media.id - pendingBase) else { return }
        removeFile(of: pending.file, in: services.photoFiles.spoolDirectory)
        try? services.media.removePending(id: pending.id)
    }

    /// The upload as a JPEG file: itself, or a PNG or HEIC converted into a spool file.
    private func jpegFile(_ spool: String, services: AppServices, context: CommandContext) throws -> String {
        guard let bytes = readFile(spool) else { throw MastodonError.unavailable }
        let format = UploadedImage.format(of: bytes)
        if format == .jpeg { return spool }
        let jpeg: [UInt8]
        do {
            // One of the decode slots, as `upload`'s decodes: gd holds the whole image, and its canvas.
            jpeg = try services.decodeGate.decoding(limit: services.policy.concurrentDecodes) {
                try UploadedImage.jpeg(of: bytes, format: format, maxPixels: services.policy.maxImagePixels)
            }
        } catch {
            guard let error = error as? UploadedImage.Failure else { throw error }
            let message = switch error {
            case .tooManyPixels: "Validation failed: the photo has too many pixels (the limit is \(services.policy.maxImagePixels / 1_000_000) megapixels)"
            case .heicUnsupported: "Validation failed: HEIC photos cannot be read by this server: send a JPEG"
            case .unreadable(.other), .unreadable(.jpeg): "Validation failed: File content type is invalid (JPEG, PNG or HEIC expected)"
            case .unreadable: "Validation failed: the photo cannot be read"
            }
            throw MastodonError(status: 422, message: message)
        }
        do {
            return try Self.spooled(jpeg, services: services, context: context)
        } catch {
            Log.error("media upload: \(error)")
            throw MastodonError.unavailable
        }
    }

    /// `bytes` in a new spool file of this request (removed once it is
    /// answered, unless kept): its path.
    private static func spooled(_ bytes: [UInt8], services: AppServices, context: CommandContext) throws(SystemError) -> String {
        let file = try services.photoFiles.makeSpool()
        context.removeWhenAnswered(file.path)
        if bytes.withUnsafeBytes({ file.write($0) }) != nil || file.close() != nil {
            throw SystemError("write \(file.path)", code: EIO)
        }
        return file.path
    }

    /// Posts the pending media `mediaID` through `upload` with `title`:
    /// the new photo's id. Its file is claimed first (renamed: a second
    /// post of the same media finds nothing) and waits again if `upload`
    /// fails, from a second name (`heldSuffix`) the claim is given: `upload`
    /// consumes the claimed file, and a failure after it was moved into
    /// place (a sync, the COMMIT) removes it there.
    static func publish(mediaID: String, title: [UInt8], as user: SignedInUser, statuses: MastodonStatuses) throws -> Int64 {
        let services = statuses.services
        guard let id = Int64(mediaID), id > pendingBase, let pending = try services.media.pending(id: id - pendingBase),
              pending.userID == user.id else { throw MastodonError(status: 422, message: "Validation failed: media \(mediaID) is not waiting for a post of yours") }
        let directory = services.photoFiles.spoolDirectory
        let waiting = filePath(of: pending.file, in: directory)
        let claimed = "\(directory)/.spool-\(waiting.dropFirst(directory.count + 1))"
        let held = waiting + Self.heldSuffix
        guard rename(waiting, claimed) == 0 else {
            throw MastodonError(status: 422, message: "Validation failed: media \(mediaID) is posted already")
        }
        // Now, for the upload folder's sweep of spool files left by a
        // stopped request, which goes by age (a rename keeps the upload's).
        utimensat(AT_FDCWD, claimed, nil, 0)
        guard link(claimed, held) == 0 else {
            Log.error("media post: \(SystemError("link \(claimed) to \(held)"))")
            _ = rename(claimed, waiting)
            throw MastodonError.unavailable
        }
        let file = UploadedFile(filename: Array("photo.jpg".utf8), contentType: Array("image/jpeg".utf8), spoolPath: claimed,
                                size: 0)
        let uploaded: Uploaded
        defer { statuses.context.removeTemporaryFiles() }
        do {
            guard let output = try statuses.run("upload", CommandArguments(fields: ["title": title], files: ["file": file])) as? Uploaded
            else { throw MastodonError.unavailable }
            uploaded = output
        } catch {
            unlink(claimed)  // where `upload` refused it before its use
            // Its row gone meanwhile (the account deleted): nothing waits for it any more.
            let gone = (try? services.media.pending(id: pending.id) == nil) ?? false  // unknown (the database down): kept
            if gone { unlink(held) } else { _ = rename(held, waiting) }
            throw error
        }
        unlink(held)
        unlink(claimed)  // had `upload` published a copy of it
        // The photo is posted: an error now would have the phone post it again, and be told the media is posted.
        do {
            try services.media.removePending(id: pending.id)
        } catch {
            Log.error("media post: media \(pending.id) stays listed (its file is the photo \(uploaded.photoID)) until the sweep: \(error)")
        }
        if let description = pending.description {
            do {
                try services.media.setDescription(description, ofPhoto: uploaded.photoID)
            } catch {
                Log.error("media post: photo \(uploaded.photoID) posted without its description: \(error)")
            }
            // A timeline rendered since the upload's own change shows it without.
            services.counters.noteStreamChanged()
        }
        return uploaded.photoID
    }

    /// `description`: at most 1500 bytes of text that everyone sees under
    /// the photo, so a comment's rules (`TextRules`: no bidi override, no
    /// invisible or control character, a few lines); nil when not sent,
    /// empty when sent empty (which removes one, as Mastodon's does).
    static func description(_ parameters: MastodonParameters) throws(MastodonError) -> [UInt8]? {
        guard let bytes = parameters.bytes("description"), !bytes.isEmpty else { return parameters.isSent("description") ? [] : nil }
        let text: [UInt8]
        do {
            text = try TextRules.checked(bytes, as: .comment)
        } catch {
            let problem = switch error {
            case .notUTF8: "must be UTF-8 text"
            case .control: "cannot contain control characters"
            case .invisible: "cannot contain invisible characters"
            case .blank: "cannot be blank (send it empty to remove it)"
            case .tooManyLines: "is limited to \(TextRules.maxCommentLines) lines"
            }
            throw MastodonError(status: 422, message: "Validation failed: Description \(problem)")
        }
        guard text.count <= maxDescriptionBytes else {
            throw MastodonError(status: 422, message: "Validation failed: Description is too long (maximum is \(maxDescriptionBytes) bytes of UTF-8)")
        }
        return text
    }

    /// `focus`: `x,y`, each from -1 to 1; nil when not sent.
    static func focus(_ parameters: MastodonParameters) throws(MastodonError) -> (x: Double, y: Double)? {
        guard let text = parameters.string("focus") else { return nil }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard parts.count == 2, let x = parts[0], let y = parts[1], (-1...1).contains(x), (-1...1).contains(y) else {
            throw MastodonError(status: 422, message: "Validation failed: focus must be x,y, each from -1.0 to 1.0")
        }
        return (x, y)
    }
}
