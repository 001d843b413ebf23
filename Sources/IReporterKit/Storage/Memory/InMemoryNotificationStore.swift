/// Notifications in memory, for the App's unit tests; a mention's text is
/// read from the in-memory comments.
public final class InMemoryNotificationStore: NotificationStore {
    private let users: InMemoryUserStore
    private let photos: InMemoryPhotoStore
    public private(set) var rows: [(id: Int64, event: NotificationEvent, created: Int64)] = []
    private var nextID: Int64 = 1

    public init(users: InMemoryUserStore, photos: InMemoryPhotoStore) {
        self.users = users
        self.photos = photos
    }

    public func record(_ event: NotificationEvent, created: Int64) throws -> Int64? {
        guard !rows.contains(where: { $0.event == event }), users.accounts.contains(where: { $0.id == event.actor }) else { return nil }
        rows.append((nextID, event, created))
        nextID += 1
        return nextID - 1
    }

    public func withdraw(_ event: NotificationEvent) throws { rows.removeAll { $0.event == event } }

    public func withdrawMention(commentID: Int64) throws {
        rows.removeAll { $0.event.kind == .mention && $0.event.commentID == commentID }
    }

    public func withdrawAll(photoID: Int64) throws { rows.removeAll { $0.event.photoID == photoID } }

    public func notifications(for recipient: Int64, kinds: Set<NotificationKind>, actor: Int64?,
                              page: PageCursor) throws -> [NotificationRecord] {
        page.pick(rows.reversed().filter { $0.event.recipient == recipient && kinds.contains($0.event.kind) && page.contains($0.id)
                                           && (actor == nil || $0.event.actor == actor) }
            .compactMap { row -> NotificationRecord? in
                guard let actor = self.users.accounts.first(where: { $0.id == row.event.actor }) else { return nil }
                let text = row.event.commentID.map { id in self.photos.commentRows.first { $0.id == id }?.text }
                return NotificationRecord(id: row.id, event: row.event, actorName: actor.username, text: text ?? nil,
                                          created: row.created)
            })
    }

    public func dismiss(id: Int64, for recipient: Int64) throws -> Bool {
        let before = rows.count
        rows.removeAll { $0.id == id && $0.event.recipient == recipient }
        return rows.count < before
    }

    public func forget(userID: Int64) throws {
        rows.removeAll { $0.event.recipient == userID || $0.event.actor == userID }
    }

    public func dismissAll(for recipient: Int64) throws -> Int {
        let before = rows.count
        rows.removeAll { $0.event.recipient == recipient }
        return before - rows.count
    }
}
