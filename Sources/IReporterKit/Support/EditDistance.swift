/// Levenshtein distance: insertions, deletions and substitutions of characters.
func editDistance(_ first: String, _ second: String) -> Int {
    let a = Array(first), b = Array(second)
    var previous = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

/// The candidate nearest to `word`, when it is near enough to be a typo of it
/// (at most a third of its letters wrong, and at most 3).
func nearest(to word: String, among candidates: [String]) -> String? {
    let limit = min(3, max(1, word.count / 3))
    return candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= limit }.min { $0.1 < $1.1 }?.0
}
