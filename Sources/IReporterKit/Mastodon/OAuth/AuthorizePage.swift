/// The server's own page at `/oauth/authorize`: the person logs in
/// (Username, Password, Log in), then says whether the app may act for them
/// (Authorize, Deny). Plain HTML, no script and no inline style, served with
/// the web client's rules (`headers`): a strict Content-Security-Policy,
/// never in a frame (a page cannot trick a click on Authorize), nosniff.
struct AuthorizePage {
    enum Step {
        case login(error: String?)
        case consent(username: String)
        /// The out-of-band code, to be copied into the app.
        case code(String)
        /// A request we cannot trust, or an error the app could not be sent.
        case refused(String)
        /// A request the app got wrong: the error, and a link that takes it
        /// back to the app, followed only if the person chooses (anyone may
        /// register an app with any redirect URI: sent there at once, the
        /// page would be an open redirector, RFC 9700 §4.11.2).
        case failed(String, returnTo: String)
    }

    let step: Step
    /// Nil for a refusal: no form.
    let request: OAuthServer.AuthorizationRequest?

    var html: [UInt8] {
        var page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            + "<title>\(Markup.escaped(title))</title></head>\n<body><main>\n<h1>\(Markup.escaped(title))</h1>\n"
        switch step {
        case .login(let error):
            if let error { page += "<p role=\"alert\">\(Markup.escaped(error))</p>\n" }
            page += intro + form(action: "login", fields: """
                <p><label for="username">Username</label><br>\
                <input id="username" name="username" autocomplete="username" required autofocus></p>
                <p><label for="password">Password</label><br>\
                <input id="password" name="password" type="password" autocomplete="current-password" required></p>
                <p><button type="submit">Log in</button></p>
                """)
        case .consent(let username):
            page += intro + "<p>Signed in as <strong>\(Markup.escaped(username))</strong>. It may:</p>\n<ul>"
                + (request?.scopes.scopes ?? []).map { "<li>\(Markup.escaped(Self.describe($0)))</li>" }.joined()
                + "</ul>\n"
                + form(action: "authorize", fields: "<p><button type=\"submit\">Authorize</button></p>")
                + form(action: "deny", fields: "<p><button type=\"submit\">Deny</button></p>")
                + form(action: "switch", fields: "<p><button type=\"submit\">Use another account</button></p>")
        case .code(let code):
            page += "<p>Copy this code into the app:</p>\n<p><output><code>\(Markup.escaped(code))</code></output></p>\n"
        case .refused(let reason):
            page += "<p role=\"alert\">\(Markup.escaped(reason))</p>\n"
        case .failed(let reason, let returnTo):
            page += "<p role=\"alert\">\(Markup.escaped(reason))</p>\n"
            if let request {
                page += "<p><a href=\"\(Markup.escaped(returnTo))\">Return to \(Markup.escaped(request.app.name))</a> "
                    + "(<code>\(Markup.escaped(request.redirectURI))</code>)</p>\n"
            }
        }
        return Array((page + "</main></body></html>\n").utf8)
    }

    private var title: String {
        switch step {
        case .login, .consent: "Authorize \(request?.app.name ?? "an app")"
        case .code: "Authorization code"
        case .refused, .failed: "This authorization cannot be given"
        }
    }

    private var intro: String {
        guard let app = request?.app else { return "" }
        let website = app.website.isEmpty ? "" : " (\(Markup.escaped(app.website)))"
        return "<p><strong>\(Markup.escaped(app.name))</strong>\(website) asks to use your iReporter account.</p>\n"
    }

    /// A form posting back here with the request's parameters.
    private func form(action: String, fields: String) -> String {
        guard let request else { return "" }
        var hidden: [(String, String)] = [("action", action), ("response_type", "code"), ("client_id", request.app.clientID),
                                          ("redirect_uri", request.redirectURI), ("scope", request.scopes.description)]
        if let state = request.state { hidden.append(("state", state)) }
        if let challenge = request.challenge, let method = request.challengeMethod {
            hidden += [("code_challenge", challenge), ("code_challenge_method", method.rawValue)]
        }
        return "<form method=\"post\" action=\"/oauth/authorize\">\n"
            + hidden.map { "<input type=\"hidden\" name=\"\($0.0)\" value=\"\(Markup.escaped($0.1))\">\n" }.joined()
            + fields + "\n</form>\n"
    }

    static func describe(_ scope: OAuthScope) -> String {
        switch scope.name {
        case "read": "see your photos, likes, comments, follows and notifications, and everyone's public ones"
        case "write": "post, delete, like and comment for you, and change whom you follow"
        case "follow": "see and change whom you follow"
        case "push": "receive your notifications as push messages"
        case "profile": "see your username"
        default: scope.name
        }
    }

    /// The web client's headers, and `form-action` extended to where the
    /// consent sends the browser: browsers apply it to a form's redirect
    /// too (Chromium does), and the code goes to the app's redirect URI.
    static func headers(redirectingTo redirectURI: String?) -> [(name: String, value: String)] {
        var formAction = "'self'"
        if let redirectURI, let scheme = RedirectURI.scheme(of: redirectURI), redirectURI != RedirectURI.outOfBand {
            if let origin = WebOrigin(redirectURI), scheme == "http" || scheme == "https" {
                formAction += " \(origin.scheme)://\(origin.host):\(origin.port)"
            } else {
                formAction += " \(scheme):"
            }
        }
        return [("Content-Security-Policy", "default-src 'none'; form-action \(formAction); frame-ancestors 'none'; "
                    + "base-uri 'none'; object-src 'none'"),
                ("X-Frame-Options", "DENY"), ("Referrer-Policy", "same-origin")]
    }

    func answer(status: Int = 200, extraHeaders: [(name: String, value: String)] = []) -> MastodonAnswer {
        var answer = MastodonAnswer.html(html, status: status)
        answer.headers = Self.headers(redirectingTo: request?.redirectURI) + extraHeaders
        return answer
    }
}
