import Testing
@testable import IReporterKit

struct OAuthSecretTests {
    @Test func secretsAreLongRandomAndURLSafe() {
        let secrets = (0..<100).map { _ in OAuthSecret.random() }
        #expect(Set(secrets).count == 100)
        #expect(secrets.allSatisfy { $0.utf8.count == 43 && PKCEMethod.isWellFormed($0) }, "256 bits, base64url without padding")
    }

    @Test func theStoredFormIsSHA256InHex() {
        #expect(OAuthSecret.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func base64URLSafe() {
        #expect(Base64.urlSafeEncode([]) == "")
        #expect(Base64.urlSafeEncode(Array("f".utf8)) == "Zg")
        #expect(Base64.urlSafeEncode(Array("fo".utf8)) == "Zm8")
        #expect(Base64.urlSafeEncode(Array("foo".utf8)) == "Zm9v")
        #expect(Base64.urlSafeEncode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64.decode("Zm9vYmFy") == Array("foobar".utf8))
    }

    /// RFC 7636 appendix B's example.
    @Test func pkceS256() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        #expect(PKCEMethod.s256.verifies(verifier, challenge: challenge))
        #expect(!PKCEMethod.s256.verifies(verifier + "x", challenge: challenge))
        #expect(!PKCEMethod.plain.verifies(verifier, challenge: challenge))
        #expect(PKCEMethod.plain.verifies(verifier, challenge: verifier))
        #expect(!PKCEMethod.plain.verifies("short", challenge: "short"), "a verifier is 43 to 128 characters")
        #expect(!PKCEMethod.isWellFormed(String(repeating: "a", count: 129)))
        #expect(!PKCEMethod.isWellFormed(String(repeating: "a", count: 42) + "/"))
    }
}
