/// Tells people what others did to their photos and account: records the
/// notification (`NotificationStore`) and publishes it on the recipient's
/// live channel (`LiveFeed`, when there is one). Called by the commands
/// where it happens (like, follow, comment) and where it is undone (unvote,
/// unfollow, uncomment, delete). Nobody is told of their own doing.
///
/// Best effort, after the change it tells of is committed: a notification
/// that cannot be stored is logged and the command still answers what it
/// did (the like is stored; saying "unavailable" would have the client
/// send it again for nothing).
struct Notifier {
    private let notifications: any NotificationStore
    private let live: (any LiveFeed)?
    private let now: () -> Int64

    init(_ services: AppServices) {
        notifications = services.notifications
        live = services.live
        now = services.now
    }

    func tell(_ event: NotificationEvent) {
        guard event.isWorthTelling else { return }
        do {
            guard let id = try notifications.record(event, created: now()) else { return } // told already
            publish(id, to: event.recipient)
        } catch {
            Log.error("notification \(event): \(error)")
        }
    }

    func withdraw(_ event: NotificationEvent) {
        guard event.isWorthTelling else { return }
        carefully("withdraw \(event)") { try notifications.withdraw(event) }
    }

    /// Tells, or withdraws, by what `holds` says after the change: each
    /// request asks again once it told or withdrew, so that a like and its
    /// undoing sent together (two taps, two devices), whose notifying
    /// follows their commits in no fixed order, leave the notification
    /// their last state calls for.
    func settle(_ event: NotificationEvent, told: Bool, holds: () throws -> Bool) {
        guard event.isWorthTelling else { return }
        if told { tell(event) } else { withdraw(event) }
        carefully("settle \(event)") {
            let now = try holds()
            guard now != told else { return }
            if now { tell(event) } else { try notifications.withdraw(event) }
        }
    }

    func withdrawMention(commentID: Int64) {
        carefully("withdraw the mention of comment \(commentID)") { try notifications.withdrawMention(commentID: commentID) }
    }

    func withdrawAll(photoID: Int64) {
        carefully("withdraw the notifications of photo \(photoID)") { try notifications.withdrawAll(photoID: photoID) }
    }

    private func carefully(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch { Log.error("notifications: \(what): \(error)") }
    }

    /// The new notification, as a one-row `notifications` answer, on its
    /// recipient's channel.
    private func publish(_ id: Int64, to recipient: Int64) {
        guard let live else { return }
        do {
            if let record = try notifications.notifications(for: recipient, kinds: Set(NotificationKind.allCases),
                                                            page: .single(id)).first {
                live.publish(NotificationList(notifications: [record]).json, toNotificationsOf: recipient)
            }
        } catch {
            Log.warning("live notifications: \(id): \(error)")
        }
    }
}
