/// The timelines a read marker is kept for (Mastodon's names).
public enum MarkerTimeline: String, CaseIterable, Sendable {
    case home, notifications
}

/// Where one person stopped reading a timeline: the newest status (home)
/// or notification they saw, as an app sent it.
public struct ReadMarker: Sendable, Equatable {
    public var timeline: MarkerTimeline
    public var lastReadID: Int64
    /// How many times it was set: apps compare it to see a newer one.
    public var version: Int64
    /// Unix seconds.
    public var updated: Int64

    public init(timeline: MarkerTimeline, lastReadID: Int64, version: Int64, updated: Int64) {
        (self.timeline, self.lastReadID, self.version, self.updated) = (timeline, lastReadID, version, updated)
    }
}

/// Before migration 015 no marker is kept.
public struct ReadMarkersNotKept: Error {}

/// The read markers (sql/migrations/015): one per person and timeline,
/// shared by every app and device of theirs.
public protocol ReadMarkerStore: AnyObject {
    /// `userID`'s markers of `timelines`, those that were ever set, in
    /// `MarkerTimeline`'s order; none before migration 015.
    func markers(of userID: Int64, in timelines: [MarkerTimeline]) throws -> [ReadMarker]
    /// Sets `userID`'s marker of `timeline`, one version on, and answers
    /// it; `ReadMarkersNotKept` before migration 015.
    func setMarker(_ timeline: MarkerTimeline, lastReadID: Int64, of userID: Int64, at time: Int64) throws -> ReadMarker
    /// Forgets `userID`'s markers (whose account is removed).
    func removeMarkers(of userID: Int64) throws
}
