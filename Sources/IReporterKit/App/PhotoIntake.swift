/// What `upload` does to a photo before it is stored: decoded whole under
/// the decode gate (the checks: a JPEG, within `max_image_pixels` and the
/// decode memory), its thumbnail made, its metadata stripped or the chosen
/// effect rendered in. One copy of these rules for `upload` and for the
/// Mastodon API's media uploads, which are checked when they arrive and
/// stored by `upload` when a status posts them.
struct PhotoIntake {
    typealias Failure = UploadCommand.Failure

    private let files: any PhotoFileStore
    private let policy: AppServices.Policy
    private let thumbnailer: Thumbnailer
    private let renderer: EffectRenderer
    private let decodeGate: DecodeGate?

    init(_ services: AppServices) {
        files = services.photoFiles
        policy = services.policy
        thumbnailer = Thumbnailer(maxDecodeBytes: services.policy.maxDecodeBytes)
        renderer = EffectRenderer(thumbnailer: Thumbnailer(maxDecodeBytes: services.policy.maxDecodeBytes))
        decodeGate = services.decodeGate
    }

    /// The photo prepared as `upload` stores it: with `effect` rendered, else stripped.
    func prepare(spool: String, effect: PhotoEffect?, in context: CommandContext) throws(Failure) -> Prepared {
        if let effect { return try render(effect, spool: spool, in: context) }
        return try preparePhoto(spool: spool, in: context)
    }

    /// What is published: the photo's file (the upload's spool file or the stripped copy), its
    /// thumbnail, its size as displayed.
    struct Prepared {
        let thumbnail: [UInt8]
        let photoPath: String
        let width: Int
        let height: Int
    }

    /// The thumbnail, and the photo without EXIF/XMP/IPTC/comments (GPS
    /// position, camera serial), keeping the orientation as a lone tag: a
    /// stripped copy, or the upload's own spool file when it had nothing to strip.
    func preparePhoto(spool: String, in context: CommandContext) throws(Failure) -> Prepared {
        let thumbnail: JPEGThumbnail
        do {
            thumbnail = try decodeGate.decoding(limit: policy.concurrentDecodes) { try thumbnailer.thumbnail(ofFileAt: spool, maxPixels: policy.maxImagePixels) }
        } catch {
            throw Failure(error, maxPixels: policy.maxImagePixels)
        }
        let clean: String?
        do {
            clean = try JPEGMetadataStripper.strip(from: spool, orientation: thumbnail.source.orientation) {
                let copy = try makeSpool(in: context)
                _ = copy.close()
                return copy.path
            }
        } catch .io(let message) {
            Log.error("stripping metadata: \(message)")
            throw .serverProblem
        } catch {
            throw .notAJPEG
        }
        return Prepared(thumbnail: thumbnail.jpeg, photoPath: clean ?? spool, width: thumbnail.source.displayWidth,
                        height: thumbnail.source.displayHeight)
    }

    /// The photo with the effect rendered in (a new encoding: no metadata), and its thumbnail.
    func render(_ effect: PhotoEffect, spool: String, in context: CommandContext) throws(Failure) -> Prepared {
        let rendered: RenderedPhoto
        do {
            rendered = try decodeGate.decoding(limit: policy.concurrentDecodes) { try renderer.render(fileAt: spool, effect: effect, maxPixels: policy.maxImagePixels) }
        } catch {
            throw Failure(error, maxPixels: policy.maxImagePixels)
        }
        let photo = try makeSpool(in: context)
        let written = rendered.photo.withUnsafeBytes { photo.write($0) }
        if let code = written ?? photo.close() {
            Log.error("upload: \(SystemError("write \(photo.path)", code: code))")
            throw .serverProblem
        }
        return Prepared(thumbnail: rendered.thumbnail, photoPath: photo.path, width: rendered.width, height: rendered.height)
    }

    /// A spool file in the upload folder, removed when the request is answered unless published.
    private func makeSpool(in context: CommandContext) throws(Failure) -> SpoolFile {
        let spool: SpoolFile
        do {
            spool = try files.makeSpool()
        } catch {
            Log.error("upload: \(error)")
            throw .serverProblem
        }
        context.removeWhenAnswered(spool.path)
        return spool
    }
}

