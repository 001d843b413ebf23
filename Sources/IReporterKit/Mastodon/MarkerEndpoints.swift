/// `/api/v1/markers` (docs.joinmastodon.org/methods/markers): where one
/// stopped reading the home timeline and the notifications, the same for
/// every app and device of theirs (`markers` and `mark`). Tusky reads the
/// notifications' marker to tell what is new; Mastodon's web client, Ice
/// Cubes and Phanpy open the home timeline where another device left it.
struct MarkerEndpoints: MastodonEndpoints {
    func register(in router: inout MastodonRouter, api: MastodonAPI) {
        router.add(.get, "/api/v1/markers", scope: OAuthScope("read:statuses")) { call in
            _ = try call.user()
            // Those asked for with `timeline[]`; as Mastodon, none without.
            let asked = Set(call.parameters.strings("timeline"))
            let timelines = MarkerTimeline.allCases.filter { asked.contains($0.rawValue) }
            guard !timelines.isEmpty else { return .emptyObject }
            return .json(try Self.json(call.run("markers", ["timelines": timelines.map(\.rawValue).joined(separator: ",")])))
        }
        // `home[last_read_id]`, `notifications[last_read_id]`, one or both;
        // with neither, nothing is set (Mastodon answers `{}` too).
        router.add(.post, "/api/v1/markers", scope: OAuthScope("write:statuses")) { call in
            _ = try call.user()
            var arguments = CommandArguments(fields: [:])
            for timeline in MarkerTimeline.allCases {
                arguments.fields[timeline.rawValue] = call.parameters.bytes("\(timeline.rawValue)[last_read_id]")
            }
            guard !arguments.fields.isEmpty else { return .emptyObject }
            return .json(try Self.json(call.run("mark", arguments)))
        }
    }

    /// `{"home":{"last_read_id":"…","version":1,"updated_at":"…"},…}`
    private static func json(_ output: any CommandOutput) throws(MastodonError) -> [UInt8] {
        guard let list = output as? ReadMarkerList else { throw MastodonError.unavailable }
        var json = PHPJSONWriter()
        json.raw("{")
        for marker in list.markers {
            if list.markers.first != marker { json.raw(",") }
            json.string(marker.timeline.rawValue)
            json.raw(":{")
            json.member("last_read_id", id: marker.lastReadID)
            json.member("version", marker.version)
            json.member("updated_at", time: marker.updated)
            json.raw("}")
        }
        json.raw("}")
        return json.bytes
    }
}
