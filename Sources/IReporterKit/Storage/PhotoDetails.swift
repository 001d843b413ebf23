/// What migration 003 keeps of each new photo: when it was uploaded and its
/// size as displayed. Photos from before have none.
public struct PhotoDetails: Sendable, Equatable {
    /// Unix seconds.
    public var created: Int64
    public var width: Int
    public var height: Int

    public init(created: Int64, width: Int, height: Int) {
        self.created = created
        self.width = width
        self.height = height
    }
}
