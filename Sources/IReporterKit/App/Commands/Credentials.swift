/// `username` and `password`, as login and register take them. The
/// original ran every SQL argument through urldecode() once more; an account
/// it created is only found with the same decoding.
public struct Credentials: CommandInput {
    public let username: [UInt8]
    public let password: [UInt8]

    public init(from parameters: any RequestParameters) {
        username = PHPStrings.urlDecode(parameters.field("username") ?? [])
        password = PHPStrings.urlDecode(parameters.field("password") ?? [])
    }

    init(username: [UInt8], password: [UInt8]) {
        self.username = username
        self.password = password
    }
}
