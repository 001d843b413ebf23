/// The `Set-Cookie` values of the session cookie (PHP's name and path, plus
/// HttpOnly and SameSite, and Secure over HTTPS).
enum SessionCookie {
    static func started(_ id: String, secure: Bool) -> String {
        "PHPSESSID=\(id); path=/; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    static func expired(secure: Bool) -> String {
        "PHPSESSID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly; SameSite=Lax"
            + (secure ? "; Secure" : "")
    }
}
