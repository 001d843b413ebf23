import CCrypto

/// A message digest through OpenSSL's libcrypto, written as lower-case hex:
/// SHA-256 for the payload hash AWS Signature V4 signs
/// (`x-amz-content-sha256`) and the login retry's mark, SHA-1 for the value
/// the 2012 app sends as its password (`AppPassword`); HMAC for a name
/// that only the holder of a key can make (the live notification channels).
enum Digest {
    case sha1, sha256

    private var algorithm: OpaquePointer? {
        switch self {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        }
    }

    func hex(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, algorithm, nil)
        }
        precondition(done == 1, "EVP_Digest(\(self)) failed")
        return Self.hexDigits(digest.prefix(Int(length)))
    }

    /// HMAC of `message` under `key` (RFC 2104), in hex.
    func hmacHex(key: [UInt8], _ message: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                HMAC(algorithm, key.baseAddress, Int32(key.count), message.bindMemory(to: UInt8.self).baseAddress, message.count,
                     &digest, &length)
            }
        }
        precondition(done != nil, "HMAC(\(self)) failed")
        return String(decoding: Self.hexDigits(digest.prefix(Int(length))), as: UTF8.self)
    }

    private static func hexDigits(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }
    }

    func hexString(_ bytes: [UInt8]) -> String { String(decoding: hex(bytes), as: UTF8.self) }
}
