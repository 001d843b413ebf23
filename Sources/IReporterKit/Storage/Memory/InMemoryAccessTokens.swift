/// Access tokens in memory, by their SHA-256 as the database keeps them:
/// the unit tests' token store.
public final class InMemoryAccessTokens: AccessTokens {
    private var grants: [[UInt8]: AccessGrant] = [:]

    public init() {}

    /// A new token for `grant`.
    public func issue(_ grant: AccessGrant) -> String {
        let token = SessionID.new() + SessionID.new()
        grants[Digest.sha256.hex(Array(token.utf8))] = grant
        return token
    }

    public func grant(forToken token: [UInt8]) -> AccessGrant? { grants[Digest.sha256.hex(token)] }
}
