/// `ReadMarkerStore` in memory: the App's unit tests.
public final class InMemoryReadMarkerStore: ReadMarkerStore {
    private var markers: [Int64: [MarkerTimeline: ReadMarker]] = [:]
    /// As a database before migration 015: nothing kept.
    public var isMigrated = true

    public init() {}

    public func markers(of userID: Int64, in timelines: [MarkerTimeline]) throws -> [ReadMarker] {
        MarkerTimeline.allCases.filter(timelines.contains).compactMap { markers[userID]?[$0] }
    }

    public func setMarker(_ timeline: MarkerTimeline, lastReadID: Int64, of userID: Int64, at time: Int64) throws -> ReadMarker {
        guard isMigrated else { throw ReadMarkersNotKept() }
        let version = (markers[userID]?[timeline]?.version ?? 0) + 1
        let marker = ReadMarker(timeline: timeline, lastReadID: lastReadID, version: version, updated: time)
        markers[userID, default: [:]][timeline] = marker
        return marker
    }

    public func removeMarkers(of userID: Int64) throws { markers[userID] = nil }
}
