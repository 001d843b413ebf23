/// Mastodon's Notification of one of ours (`notifications`): `favourite`
/// and `mention` carry their status (the liked photo; the comment, a reply
/// to the photo), null when it is gone; `follow` none.
public struct NotificationEntity: Sendable {
    public let record: NotificationRecord
    public let status: StatusEntity?

    public init(record: NotificationRecord, status: StatusEntity?) {
        (self.record, self.status) = (record, status)
    }

    public func write(into json: inout PHPJSONWriter, links: MastodonLinks) {
        json.raw("{")
        json.member("id", id: record.id)
        json.member("type", record.event.kind.rawValue)
        json.member("created_at", time: record.created)
        json.member("group_key", "ungrouped-\(record.id)")
        json.name("account")
        AccountEntity(id: record.event.actor, username: record.actorName).write(into: &json, links: links)
        json.name("status")
        if let status { status.write(into: &json, links: links) } else { json.raw("null") }
        json.raw("}")
    }

    public func json(links: MastodonLinks) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 2000)
        write(into: &json, links: links)
        return json.bytes
    }

    /// `[notification,…]`
    public static func list(_ notifications: [NotificationEntity], links: MastodonLinks) -> [UInt8] {
        var json = PHPJSONWriter(capacity: 2000 * notifications.count + 2)
        json.raw("[")
        for (index, notification) in notifications.enumerated() {
            if index > 0 { json.raw(",") }
            notification.write(into: &json, links: links)
        }
        json.raw("]")
        return json.bytes
    }
}
