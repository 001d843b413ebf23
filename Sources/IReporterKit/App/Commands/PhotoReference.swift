/// The input of a command that takes one photo by its id (`IdPhoto`, required).
public struct PhotoReference: CommandInput {
    public let photoID: Int64

    public init(from parameters: any RequestParameters) throws {
        photoID = try CommandParameter.photo.requiredInteger(parameters)
    }
}

/// The input of a command that takes one account by its id (`IdUser`, required).
public struct AccountReference: CommandInput {
    public let userID: Int64

    public init(from parameters: any RequestParameters) throws {
        userID = try CommandParameter.account.requiredInteger(parameters)
    }
}
