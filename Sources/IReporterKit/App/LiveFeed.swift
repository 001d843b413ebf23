/// Where a committed photo is announced to live subscribers (nginx's Nchan
/// module holds them, so no worker waits with a client), and each new
/// notification to its recipient alone. Best effort: the photo or the
/// notification is stored whether or not the announcement gets through.
public protocol LiveFeed: AnyObject {
    /// Sends one message (the photo as a one-photo `stream` answer).
    func publish(_ message: [UInt8])
    /// Sends one message (a one-row `notifications` answer) on the channel
    /// only `userID` knows (`notificationChannel(of:)`).
    func publish(_ message: [UInt8], toNotificationsOf userID: Int64)
    /// The name of `userID`'s notification channel: unguessable without
    /// the server's key, told to that user alone (`notification_channel`).
    func notificationChannel(of userID: Int64) -> String
}
