/// Told where each request starts and ends, so that reads served by a
/// database replica show the signed-in user what they wrote
/// (`ReplicaReads`, docs/SCALING.md). Nil in `AppServices` when reads all
/// go to one database.
public protocol ReadYourWrites: AnyObject {
    /// `reader`: the request's signed-in user, asked only when needed.
    func beginRequest(reader: @escaping () -> Int64?)
    func endRequest()
}
