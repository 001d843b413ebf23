/// The Mastodon client API (docs/API.md, "The Mastodon-compatible API"),
/// at the host's root beside `/iReporter/`: what today's phone apps speak.
/// Its endpoints run the declared commands (`CommandRouter`), so a photo,
/// a like or a comment is the same whichever door it came through; one
/// instance per worker process.
public final class MastodonAPI {
    public let services: AppServices
    /// The declared commands, run as a token's user (`MastodonCall.run`).
    public let commands: CommandRouter
    private var router: MastodonRouter
    /// The statuses this worker rendered, for the lists that show them again.
    let renderedStatuses = RenderedStatuses()

    /// Every group of endpoints, one file each.
    static let endpointGroups: [any MastodonEndpoints] = [
        UnsupportedEndpoints(),
        // Before AccountEndpoints: the first route that matches answers, and
        // /accounts/relationships is no /accounts/:id.
        FollowEndpoints(), NotificationEndpoints(), MarkerEndpoints(),
        StatusEndpoints(), MediaEndpoints(), TimelineEndpoints(), AccountEndpoints(),
        OAuthEndpoints(), InstanceEndpoints(),
    ]

    public init(api: IReporterAPI) {
        services = api.services
        commands = api.router
        router = MastodonRouter(tokens: api.services.accessTokens, commands: api.router,
                                rateLimit: MastodonRateLimit(counters: api.services.counters,
                                                             limit: api.services.policy.mastodonRateLimit,
                                                             wallClock: api.services.wallClock))
        for group in Self.endpointGroups { group.register(in: &router, api: self) }
    }

    public func answer(_ request: MastodonRequest) -> MastodonAnswer {
        var request = request
        if request.arrived == nil { request.arrived = services.clock.now }
        return router.answer(request)
    }

    /// Whether a route has this path: CORS's preflight is answered for it.
    public func knows(path: String) -> Bool { router.knows(path: path) }
}

/// A group of endpoints (accounts, statuses, …) in a file of its own.
protocol MastodonEndpoints: Sendable {
    func register(in router: inout MastodonRouter, api: MastodonAPI)
}
