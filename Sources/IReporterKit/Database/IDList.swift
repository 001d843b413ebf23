/// A list of values bound as the parameters of one statement in one of a
/// few fixed widths, so that lists of any length make few distinct SQL
/// texts (each distinct text is a prepared statement the connection
/// caches). A shorter list is padded by repeating its last item: in an
/// `IN (...)` list, or the rows of an `INSERT IGNORE`, a repeat changes
/// nothing.
enum IDList {
    /// The widths a list is padded to; a longer list is cut into groups of
    /// the widest. At most 4 times the items are sent, at most 5 texts a
    /// statement.
    static let widths = [1, 8, 32, 128, 512]

    /// `items` in groups of at most `widest` (one of `widths`), each padded
    /// to the narrowest width that holds it.
    static func groups<Item>(_ items: [Item], widest: Int = widths.last!) -> [[Item]] {
        precondition(widths.contains(widest), "a group's width is one of IDList.widths")
        return stride(from: 0, to: items.count, by: widest).map { start in
            let group = Array(items[start..<min(start + widest, items.count)])
            let width = widths.first { $0 >= group.count }!
            return group + Array(repeating: group.last!, count: width - group.count)
        }
    }

    /// `count` parameter marks, `?, ?, ...` (or `(?, ?), ...` with `mark`).
    static func marks(_ count: Int, mark: String = "?") -> String {
        Array(repeating: mark, count: count).joined(separator: ", ")
    }
}
