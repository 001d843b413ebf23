/// Mastodon's Relationship between the token's user and one account:
/// whether either follows the other. What we do not have (blocks, mutes,
/// follow requests, notes) is always false or empty.
public struct RelationshipEntity: Sendable, Equatable {
    public let id: Int64
    public let following: Bool
    public let followedBy: Bool

    public init(id: Int64, following: Bool, followedBy: Bool) {
        (self.id, self.following, self.followedBy) = (id, following, followedBy)
    }

    public func write(into json: inout PHPJSONWriter) {
        json.raw("{")
        json.member("id", id: id)
        json.member("following", following)
        json.member("showing_reblogs", following)
        json.member("notifying", false)
        json.name("languages")
        json.raw("null")
        json.member("followed_by", followedBy)
        for flag: StaticString in ["blocking", "blocked_by", "muting", "muting_notifications", "requested", "requested_by",
                                   "domain_blocking", "endorsed"] {
            json.member(flag, false)
        }
        json.member("note", "")
        json.raw("}")
    }

    public var json: [UInt8] {
        var json = PHPJSONWriter(capacity: 320)
        write(into: &json)
        return json.bytes
    }

    /// `[relationship,…]`
    public static func list(_ relationships: [RelationshipEntity]) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 320 * relationships.count + 2)
        json.raw("[")
        for (index, relationship) in relationships.enumerated() {
            if index > 0 { json.raw(",") }
            relationship.write(into: &json)
        }
        json.raw("]")
        return json.bytes
    }
}
