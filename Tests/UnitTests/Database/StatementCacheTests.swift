import Testing
@testable import IReporterKit

/// A connection's bounded cache of prepared statements: the least recently
/// used makes room, so what a connection holds is a constant.
struct StatementCacheTests {
    @Test func holdsAtMostItsCapacityDroppingTheLeastRecentlyUsed() {
        var cache = StatementCache<Int>(capacity: 3)
        #expect(cache.insert(1, for: "a") == nil)
        #expect(cache.insert(2, for: "b") == nil)
        #expect(cache.insert(3, for: "c") == nil)
        #expect(cache.isFull)
        // A use makes "a" the most recent: "b" is now the oldest.
        #expect(cache.statement(for: "a") == 1)
        #expect(cache.insert(4, for: "d") == 2)
        #expect(cache.statement(for: "b") == nil)
        #expect(cache.insert(5, for: "e") == 3)
        #expect(cache.count == 3)
        #expect(cache.statement(for: "a") == 1)
        #expect(cache.statement(for: "d") == 4)
        #expect(cache.statement(for: "e") == 5)
    }

    @Test func aThousandDistinctTextsLeaveTheCapacity() {
        var cache = StatementCache<Int>(capacity: 8)
        for index in 0..<1000 { cache.insert(index, for: "SELECT \(index)") }
        #expect(cache.count == 8)
        #expect(cache.statement(for: "SELECT 999") == 999)
        #expect(cache.statement(for: "SELECT 991") == nil)
    }

    @Test func replacingAHeldTextDropsNothing() {
        var cache = StatementCache<Int>(capacity: 2)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        #expect(cache.insert(3, for: "a") == nil)
        #expect(cache.count == 2)
        #expect(cache.statement(for: "a") == 3)
    }

    @Test func emptiedAndMadeRoomInExplicitly() {
        var cache = StatementCache<Int>(capacity: 4)
        #expect(cache.removeLeastRecentlyUsed() == nil)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        #expect(cache.removeLeastRecentlyUsed() == 1)
        cache.removeAll()
        #expect(cache.count == 0)
    }
}

/// Lists of ids bound in a few fixed widths, so that any number of lists
/// makes a handful of statement texts.
struct IDListTests {
    @Test func everyLengthIsPaddedToOneOfTheWidthsByRepeatingItsLast() {
        var widths = Set<Int>()
        for count in Array(1...140) + [500, 511, 512, 513, 1024, 1025, 2000] {
            let groups = IDList.groups(Array(1...Int64(count)))
            #expect(Set(groups.flatMap { $0 }) == Set(1...Int64(count)))
            for group in groups {
                #expect(IDList.widths.contains(group.count))
                widths.insert(group.count)
            }
        }
        #expect(widths == Set(IDList.widths))
        #expect(IDList.groups([7, 9, 4]) == [[7, 9, 4, 4, 4, 4, 4, 4]])
        #expect(IDList.groups([Int64]()) == [])
    }

    @Test func groupsOfANarrowerWidest() {
        let groups = IDList.groups(Array(0..<40), widest: 32)
        #expect(groups.map(\.count) == [32, 8])
        #expect(IDList.marks(3) == "?, ?, ?")
        #expect(IDList.marks(2, mark: "(?, ?)") == "(?, ?), (?, ?)")
    }
}
