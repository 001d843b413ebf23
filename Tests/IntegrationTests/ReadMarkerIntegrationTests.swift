import Testing
@testable import IReporterKit
import TestSupport

extension DatabaseTests {
    /// Read markers on the real MariaDB (migration 015): set, moved on a
    /// version at a time, each person and timeline its own, never kept for
    /// an account that is gone, and nothing kept before the migration.
    @Suite struct ReadMarkerIntegrationTests {
        @Test func markersAreSetMovedOnAndRead() throws {
            let phone = try APIHarness()
            try phone.database.execute("INSERT INTO login (username, pass) VALUES ('alice', 'p'), ('bob', 'p')")
            let store = MariaDBReadMarkerStore(database: phone.database)
            #expect(try store.markers(of: 1, in: MarkerTimeline.allCases).isEmpty)
            #expect(try store.setMarker(.home, lastReadID: 1_000_000_000_000_007, of: 1, at: 100)
                    == ReadMarker(timeline: .home, lastReadID: 1_000_000_000_000_007, version: 1, updated: 100), "a reply's status id fits")
            #expect(try store.setMarker(.notifications, lastReadID: 3, of: 1, at: 110).version == 1)
            #expect(try store.setMarker(.home, lastReadID: 9, of: 1, at: 120)
                    == ReadMarker(timeline: .home, lastReadID: 9, version: 2, updated: 120))
            _ = try store.setMarker(.home, lastReadID: 5, of: 2, at: 130)
            #expect(try store.markers(of: 1, in: [.notifications, .home]).map(\.timeline) == [.home, .notifications], "in the timelines' order")
            #expect(try store.markers(of: 1, in: [.notifications]) == [ReadMarker(timeline: .notifications, lastReadID: 3, version: 1, updated: 110)])
            #expect(try store.markers(of: 2, in: [.home]).map(\.lastReadID) == [5])

            try store.removeMarkers(of: 1)
            #expect(try store.markers(of: 1, in: MarkerTimeline.allCases).isEmpty)
            #expect(try store.markers(of: 2, in: [.home]).count == 1, "another's stay")
            // An account no longer there gets none (a set in flight as it is deleted).
            try phone.database.execute("DELETE FROM login WHERE IdUser = 1")
            _ = try store.setMarker(.home, lastReadID: 9, of: 1, at: 140)
            #expect(try phone.database.query("SELECT COUNT(*) FROM read_markers WHERE IdUser = 1").first?[0] == Array("0".utf8))
        }

        @Test func beforeMigration015NothingIsKept() throws {
            let phone = try APIHarness(migrated: false)
            try phone.database.execute("INSERT INTO login (username, pass) VALUES ('alice', 'p')")
            let store = MariaDBReadMarkerStore(database: phone.database)
            #expect(try store.markers(of: 1, in: MarkerTimeline.allCases).isEmpty)
            #expect(throws: ReadMarkersNotKept.self) { try store.setMarker(.home, lastReadID: 1, of: 1, at: 1) }
            #expect(throws: (any Error).self, "a deletion finds the table missing; AccountRemoval reads that as nothing held") { try store.removeMarkers(of: 1) }
        }
    }
}
