import CCrypto

/// SHA-256 through OpenSSL's libcrypto: the payload hash AWS Signature V4
/// signs (`x-amz-content-sha256`), so the store can check the body it got.
enum SHA256 {
    static func hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        precondition(done == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: digest.prefix(32).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}
