/// `delete`: removes the logged-in user's photo `IdPhoto` with its
/// comments, votes and notifications, then its files. The row goes first, in one
/// transaction: a crash after it leaves files without a row, which
/// `ireporter repair` (and every start) removes; never a row without its
/// files.
public struct DeleteCommand: SignedInCommand {
    public let descriptor = CommandDescriptor(
        "delete", "Delete your photo with its comments and votes.", parameters: [.photo], failures: [.notFound, .notAllowed],
        result: .successful)

    public enum Failure: APIFailure {
        case noSuchPhoto
        case notOwner

        public var message: String {
            switch self {
            case .noSuchPhoto: "No such photo"
            case .notOwner: "You can only delete your own photos"
            }
        }

        public var kind: FailureKind {
            switch self {
            case .noSuchPhoto: .notFound
            case .notOwner: .notAllowed
            }
        }
    }

    private let removal: PhotoRemoval

    public init(_ services: AppServices) { removal = PhotoRemoval(services) }

    public func run(_ input: PhotoReference, as user: SignedInUser, in context: CommandContext) throws -> Successful {
        switch try removal.remove(id: input.photoID, by: user.id) {
        case .notFound: throw Failure.noSuchPhoto
        case .notOwner: throw Failure.notOwner
        case .deleted: return Successful()
        }
    }
}

/// A photo's removal by its owner, the one way (`delete`, and
/// `delete_account` for each photo): its row with its comments and votes in
/// one transaction, then its files, every size of them.
struct PhotoRemoval {
    private let photos: any PhotoStore
    private let files: any PhotoFileStore
    private let counters: any SharedCounters
    private let notifier: Notifier

    init(_ services: AppServices) {
        photos = services.photos
        files = services.photoFiles
        counters = services.counters
        notifier = Notifier(services)
    }

    func remove(id: Int64, by userID: Int64) throws -> PhotoDeletion {
        let outcome = try photos.deleteOwned(id: id, by: userID)
        guard outcome == .deleted else { return outcome }
        Log.info("photo \(id) of user \(userID) deleted")
        counters.noteStreamChanged()
        notifier.withdrawAll(photoID: id)
        do {
            try files.discard(id: id)
        } catch {
            // The photo is gone for every reader; its files are debris now.
            Log.error("delete \(id): \(error); the photo is still served until its files go: `ireporter check` says whose "
                      + "the folder's files are, `ireporter repair --yes` sets them aside")
        }
        return outcome
    }
}
