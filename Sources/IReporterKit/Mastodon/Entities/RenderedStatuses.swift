/// Statuses as rendered, by what they show; one per worker process. A
/// status's JSON is a function of its entity and the site's address alone,
/// so a list showing statuses rendered before (the next poll of a
/// timeline, another viewer's page with the same photos) copies their
/// bytes instead of writing them again: writing them was the largest part
/// of a timeline's cost (bench/profile-changes.md, entry 19). Nothing kept
/// can be stale: a changed count, caption, description or favourite makes
/// another entity, hence another key.
final class RenderedStatuses {
    private struct Key: Hashable {
        let status: StatusEntity
        let siteURL: String

        /// What tells statuses apart cheaply; equality compares them whole.
        func hash(into hasher: inout Hasher) {
            hasher.combine(status.id)
            hasher.combine(status.favouritesCount)
            hasher.combine(status.repliesCount)
            hasher.combine(status.favourited)
            hasher.combine(siteURL)
        }
    }

    private var kept: [Key: [UInt8]] = [:]
    private let capacity: Int

    /// At most `capacity` statuses (about 1.5 KB each); when full, all go.
    init(capacity: Int = 2048) { self.capacity = capacity }

    /// `[status,…]`, each status copied when kept.
    func list(_ statuses: [StatusEntity], links: MastodonLinks) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 1600 * statuses.count + 2)
        StatusEntity.writeList(statuses, into: &json, links: links, kept: self)
        return json.bytes
    }

    /// The status's JSON, kept from before or written now and kept.
    func rendering(of status: StatusEntity, links: MastodonLinks) -> [UInt8] {
        let key = Key(status: status, siteURL: links.siteURL)
        if let bytes = kept[key] { return bytes }
        if kept.count >= capacity { kept.removeAll(keepingCapacity: true) }
        let bytes = status.json(links: links)
        kept[key] = bytes
        return bytes
    }
}
