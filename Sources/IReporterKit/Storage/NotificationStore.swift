/// What a notification tells (migration 009's `kind`).
public enum NotificationKind: String, Sendable, CaseIterable {
    /// Liked your photo.
    case favourite
    case follow
    /// Commented on your photo.
    case mention
}

/// What happened, to whom, by whom: a notification without its id and
/// time. The same event is recorded once.
public struct NotificationEvent: Sendable, Hashable {
    public var kind: NotificationKind
    public var recipient: Int64
    public var actor: Int64
    public var photoID: Int64?
    public var commentID: Int64?

    public static func favourite(of photo: PhotoRecord, by actor: Int64) -> Self {
        Self(kind: .favourite, recipient: photo.userID, actor: actor, photoID: photo.id)
    }

    public static func follow(of followee: Int64, by actor: Int64) -> Self {
        Self(kind: .follow, recipient: followee, actor: actor)
    }

    public static func mention(_ comment: CommentRecord, on photo: PhotoRecord) -> Self {
        Self(kind: .mention, recipient: photo.userID, actor: comment.userID, photoID: photo.id, commentID: comment.id)
    }

    /// Someone else's doing: nobody is told of their own.
    public var isWorthTelling: Bool { actor != recipient }
}

/// A notification as `notifications` lists it.
public struct NotificationRecord: Sendable, Equatable {
    public var id: Int64
    public var event: NotificationEvent
    public var actorName: [UInt8]
    /// A mention's comment text.
    public var text: [UInt8]?
    /// Unix seconds.
    public var created: Int64

    public init(id: Int64, event: NotificationEvent, actorName: [UInt8], text: [UInt8]?, created: Int64) {
        (self.id, self.event, self.actorName, self.text, self.created) = (id, event, actorName, text, created)
    }
}

/// Each person's notifications (migration 009), newest first.
public protocol NotificationStore: AnyObject {
    /// Records the event; its new id, or nil when it was recorded already or
    /// its actor's account is gone (deleted while its like or comment was on its way).
    func record(_ event: NotificationEvent, created: Int64) throws -> Int64?
    /// Removes the event's notification (a like, follow undone), if any.
    func withdraw(_ event: NotificationEvent) throws
    /// Removes the mention of this comment (it was removed), if any.
    func withdrawMention(commentID: Int64) throws
    /// Removes every notification about this photo (it was deleted).
    func withdrawAll(photoID: Int64) throws
    /// A page of `recipient`'s, of these kinds (and by `actor` alone when
    /// given), newest first; those whose actor's account is gone are not shown.
    func notifications(for recipient: Int64, kinds: Set<NotificationKind>, actor: Int64?, page: PageCursor) throws -> [NotificationRecord]
    /// Removes one of `recipient`'s; false when they have no such one.
    func dismiss(id: Int64, for recipient: Int64) throws -> Bool
    /// Removes all of `recipient`'s; how many.
    func dismissAll(for recipient: Int64) throws -> Int
    /// Removes every notification to or by `userID` (the account was deleted).
    func forget(userID: Int64) throws
}

extension NotificationStore {
    /// A page of `recipient`'s of these kinds, whoever did them.
    func notifications(for recipient: Int64, kinds: Set<NotificationKind>, page: PageCursor) throws -> [NotificationRecord] {
        try notifications(for: recipient, kinds: kinds, actor: nil, page: page)
    }
}
