/// Flickr's sizes, by the letter at the end of a file's name: `s` and `q`
/// centre squares, the others the whole photo within a box (its long side
/// at most `bound`); `medium` (no letter, 500) and `original` (`o`, the
/// stored photo). Never enlarged: a photo smaller than a size is rendered
/// at its own size (a square at its short side).
public enum PhotoSize: String, Sendable, CaseIterable {
    case square75 = "s", square150 = "q", thumbnail = "t", small240 = "m", small320 = "n", small400 = "w"
    case medium = "", medium640 = "z", medium800 = "c", large = "b", original = "o"

    /// The letter of `_<letter>.jpg` (nil for `medium`, whose name has none).
    public var letter: String? { self == .medium ? nil : rawValue }

    /// From a file name's letter; nil for a letter that is not a size.
    public init?(letter: Substring?) {
        guard let letter else { self = .medium; return }
        guard !letter.isEmpty, let size = PhotoSize(rawValue: String(letter)), size != .medium else { return nil }
        self = size
    }

    public var isSquare: Bool { self == .square75 || self == .square150 }

    /// The square's side or the box's long side; nil for the original.
    public var bound: Int? {
        switch self {
        case .square75: 75
        case .square150: 150
        case .thumbnail: 100
        case .small240: 240
        case .small320: 320
        case .small400: 400
        case .medium: 500
        case .medium640: 640
        case .medium800: 800
        case .large: 1024
        case .original: nil
        }
    }

    /// Flickr's name of the size (`flickr.photos.getSizes`' `label`).
    public var label: String {
        switch self {
        case .square75: "Square"
        case .square150: "Large Square"
        case .thumbnail: "Thumbnail"
        case .small240: "Small"
        case .small320: "Small 320"
        case .small400: "Small 400"
        case .medium: "Medium"
        case .medium640: "Medium 640"
        case .medium800: "Medium 800"
        case .large: "Large"
        case .original: "Original"
        }
    }

    /// The size of this rendition of a photo of `width` x `height` (as
    /// displayed): never larger than the photo, the box's proportions kept.
    public func dimensions(ofPhoto width: Int, _ height: Int) -> (width: Int, height: Int) {
        guard let bound, width > 0, height > 0 else { return (width, height) }
        if isSquare {
            let side = min(bound, width, height)
            return (side, side)
        }
        let long = max(width, height)
        guard long > bound else { return (width, height) }
        let scaled = { (side: Int) in max(1, (side * bound + long / 2) / long) }
        return width >= height ? (bound, scaled(height)) : (scaled(width), bound)
    }
}
