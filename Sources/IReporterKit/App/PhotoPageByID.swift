/// A page of photos found by their ids elsewhere (`feed`'s in the graph,
/// `liked`'s in the votes), read by id and rendered in `stream`'s shape,
/// with `stream`'s `extras` as the viewer sees them: a few point queries
/// (the rows, the counts, then what the extras ask), whatever the list's
/// size.
struct PhotoPageByID {
    let photos: any PhotoStore
    let media: any MediaStore

    /// `ids` newest first; a photo deleted meanwhile is left out.
    func render(_ ids: [Int64], extras fields: [StreamExtra], viewer: Int64) throws -> [UInt8] {
        let found = try photos.photos(ids: Set(ids))
        let page = ids.compactMap { found[$0] }
        guard !fields.isEmpty else { return PhotoList(photos: page).json }
        let extras = try photos.extras(of: page.map(\.id), viewer: viewer)
        let withExtras = page.map { ($0, extras[$0.id] ?? PhotoExtras()) }
        return PhotoListWithExtras(photos: try StreamExtra.completing(withExtras, for: fields, photos: photos, media: media),
                                   fields: fields, hasViewer: true).json
    }
}
