/// Where a committed photo is announced to live subscribers (nginx's Nchan
/// module holds them, so no worker waits with a client). Best effort: the
/// photo is stored whether or not the announcement gets through.
public protocol LiveFeed: AnyObject {
    /// Sends one message (the photo as a one-photo `stream` answer).
    func publish(_ message: [UInt8])
}
