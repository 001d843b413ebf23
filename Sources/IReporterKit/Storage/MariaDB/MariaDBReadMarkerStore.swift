/// `read_markers` (sql/migrations/015).
public final class MariaDBReadMarkerStore: ReadMarkerStore {
    let database: DatabaseConnection
    private static let table = "read_markers"

    public init(database: DatabaseConnection) { self.database = database }

    public func markers(of userID: Int64, in timelines: [MarkerTimeline]) throws -> [ReadMarker] {
        let rows = try database.ifTableExists(Self.table) {
            try database.query("SELECT timeline, last_read_id, version, updated FROM read_markers WHERE IdUser = ?", [.int(userID)])
        } ?? []
        let found = rows.compactMap(Self.marker)
        return MarkerTimeline.allCases.filter(timelines.contains).compactMap { timeline in found.first { $0.timeline == timeline } }
    }

    /// One statement sets it (a new row starts at version 1), only while the
    /// account's row is there (`delete_account` removes the markers again
    /// after that row: one set in flight meanwhile is not left behind). The
    /// row is read back for its version, which a set landing in between may
    /// have moved on: the answer is then that newer one, as a read would give.
    public func setMarker(_ timeline: MarkerTimeline, lastReadID: Int64, of userID: Int64, at time: Int64) throws -> ReadMarker {
        let name = DatabaseValue.bytes(Array(timeline.rawValue.utf8))
        let stored = try database.ifTableExists(Self.table) {
            try database.execute("INSERT INTO read_markers (IdUser, timeline, last_read_id, version, updated) "
                                 + "SELECT IdUser, ?, ?, 1, ? FROM login WHERE IdUser = ? "
                                 + "ON DUPLICATE KEY UPDATE last_read_id = VALUES(last_read_id), version = read_markers.version + 1, "
                                 + "updated = VALUES(updated)", [name, .int(lastReadID), .int(time), .int(userID)])
            return try database.query("SELECT timeline, last_read_id, version, updated FROM read_markers WHERE IdUser = ? AND timeline = ?",
                                      [.int(userID), name]).first.flatMap(Self.marker)
        }
        guard let stored else { throw ReadMarkersNotKept() }
        // None: the account is gone (deleted meanwhile).
        return stored ?? ReadMarker(timeline: timeline, lastReadID: lastReadID, version: 1, updated: time)
    }

    public func removeMarkers(of userID: Int64) throws {
        try database.execute("DELETE FROM read_markers WHERE IdUser = ?", [.int(userID)])
    }

    private static func marker(_ row: Row) -> ReadMarker? {
        guard let name = row["timeline"], let timeline = MarkerTimeline(rawValue: String(decoding: name, as: UTF8.self)),
              let lastReadID = row.int64("last_read_id"), let version = row.int64("version"), let updated = row.int64("updated")
        else { return nil }
        return ReadMarker(timeline: timeline, lastReadID: lastReadID, version: version, updated: updated)
    }
}
