import CArgon2
import CSystem

/// Passwords at rest: Argon2id (OWASP's 19 MiB, t=2, p=1 by default) of the
/// value the client sends, as a PHC string (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`)
/// that carries its own parameters. The comparison is ours, in constant time.
///
/// The original compared the stored value with the column's latin1_swedish_ci
/// collation: case and trailing spaces did not matter (the app's SHA-1 hex
/// logged in in upper case too). Hashing the value lower-cased (ASCII) and
/// without trailing spaces keeps exactly that for what clients send.
public struct PasswordHasher: Sendable {
    public struct Parameters: Sendable, Equatable {
        public var memoryKiB: UInt32 = 19 * 1024
        public var iterations: UInt32 = 2
        public var parallelism: UInt32 = 1
        public init() {}
    }

    public enum Verdict: Equatable {
        case mismatch
        /// Matches; `upgrade` when the stored value should be replaced by a
        /// fresh hash (a legacy plain value, or older parameters).
        case match(upgrade: Bool)
    }

    public let parameters: Parameters
    /// Where the server bounds concurrent hashes across its workers (nil: no bound).
    private let gate: (HashingGate, limit: Int)?
    private static let saltBytes = 16
    private static let hashBytes = 32

    public init(parameters: Parameters = Parameters(), gate: HashingGate? = nil, concurrentHashes: Int = 1) {
        self.parameters = parameters
        self.gate = gate.map { ($0, concurrentHashes) }
    }

    /// Runs an Argon2 computation, within the gate's limit if there is one.
    private func argon2(_ body: () -> Int32) -> Int32 {
        guard let (gate, limit) = gate else { return body() }
        return gate.withSlot(limit: limit, body)
    }

    public static func isHash(_ stored: [UInt8]) -> Bool { stored.starts(with: Array("$argon2id$".utf8)) }

    /// What the original's collation compared: ASCII case folded, trailing spaces dropped.
    static func normalized(_ password: [UInt8]) -> [UInt8] {
        var bytes = password
        while bytes.last == 0x20 { bytes.removeLast() }
        return bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
    }

    public func hash(_ password: [UInt8]) -> [UInt8] {
        var salt = [UInt8](repeating: 0, count: Self.saltBytes)
        let status = salt.withUnsafeMutableBytes { csystem_random_bytes($0.baseAddress!, $0.count) }
        precondition(status == 0, "getrandom failed")
        let input = Self.normalized(password)
        let length = argon2_encodedlen(parameters.iterations, parameters.memoryKiB, parameters.parallelism,
                                       UInt32(Self.saltBytes), UInt32(Self.hashBytes), Argon2_id)
        var encoded = [CChar](repeating: 0, count: length)
        let result = argon2 {
            input.withUnsafeBytes { pwd in
                argon2id_hash_encoded(parameters.iterations, parameters.memoryKiB, parameters.parallelism,
                                      pwd.baseAddress, pwd.count, salt, salt.count, Self.hashBytes, &encoded, length)
            }
        }
        precondition(result == ARGON2_OK.rawValue, "argon2id_hash_encoded: \(String(cString: argon2_error_message(result)))")
        return encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }

    /// Checks `password` against what the `pass` column holds: a PHC hash, or
    /// (not yet migrated) the value the PHP version stored as sent.
    public func verify(_ password: [UInt8], against stored: [UInt8]) -> Verdict {
        let input = Self.normalized(password)
        guard Self.isHash(stored) else {
            return Self.constantTimeEqual(input, Self.normalized(stored)) ? .match(upgrade: true) : .mismatch
        }
        guard let phc = PHCString(stored) else { return .mismatch }
        var computed = [UInt8](repeating: 0, count: phc.hash.count)
        let result = argon2 {
            input.withUnsafeBytes { pwd in
                argon2id_hash_raw(phc.iterations, phc.memoryKiB, phc.parallelism, pwd.baseAddress, pwd.count,
                                  phc.salt, phc.salt.count, &computed, computed.count)
            }
        }
        guard result == ARGON2_OK.rawValue, Self.constantTimeEqual(computed, phc.hash) else { return .mismatch }
        let current = phc.memoryKiB == parameters.memoryKiB && phc.iterations == parameters.iterations
            && phc.parallelism == parameters.parallelism && phc.hash.count == Self.hashBytes
        return .match(upgrade: !current)
    }

    /// Spends the time of one verification with this hasher's parameters,
    /// so that an unknown username takes as long to refuse as a wrong password.
    public func burnVerificationTime(_ password: [UInt8]) {
        let salt = [UInt8](repeating: 0x5A, count: Self.saltBytes)
        var discarded = [UInt8](repeating: 0, count: Self.hashBytes)
        _ = argon2 {
            password.withUnsafeBytes { pwd in
                argon2id_hash_raw(parameters.iterations, parameters.memoryKiB, parameters.parallelism, pwd.baseAddress,
                                  pwd.count, salt, salt.count, &discarded, discarded.count)
            }
        }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}

/// `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (unpadded standard base64).
struct PHCString {
    var memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32
    var salt: [UInt8], hash: [UInt8]

    init?(_ bytes: [UInt8]) {
        let fields = bytes.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 6, fields[0].isEmpty, fields[1] == "argon2id", fields[2] == "v=19" else { return nil }
        var values: [String: UInt32] = [:]
        for pair in fields[3].split(separator: ",") {
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let value = UInt32(parts[1]) else { return nil }
            values[String(parts[0])] = value
        }
        guard let m = values["m"], let t = values["t"], let p = values["p"],
              (8...4 * 1024 * 1024).contains(m), (1...64).contains(t), (1...16).contains(p),
              let salt = Base64.decode(fields[4]), let hash = Base64.decode(fields[5]),
              salt.count >= 8, (16...64).contains(hash.count) else { return nil }
        (memoryKiB, iterations, parallelism, self.salt, self.hash) = (m, t, p, salt, hash)
    }
}
