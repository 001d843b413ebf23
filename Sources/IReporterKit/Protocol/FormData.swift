/// The `$_POST` / `$_FILES` equivalent of one request.
public struct FormData: Sendable {
    /// Text fields by name; a repeated name keeps the last value, as PHP does.
    public private(set) var fields: [String: [UInt8]] = [:]
    /// File parts by name (the last one of a repeated name).
    public private(set) var files: [String: UploadedFile] = [:]
    /// Names sent PHP-array style (`file[]`): PHP turns them into arrays, which
    /// are never a usable string or file.
    public private(set) var arrayNames: Set<String> = []
    /// The values of `name[]` fields, in the order sent (what the
    /// Mastodon-compatible API's lists are: `media_ids[]`, `id[]`); its
    /// nested lists too, by their whole name (`poll[options][]` as `poll[options]`).
    public private(set) var arrayValues: [String: [[UInt8]]] = [:]
    /// Fields with a nested name, by the whole name as sent
    /// (`home[last_read_id]`: the Mastodon-compatible API's; PHP makes them arrays).
    public private(set) var nestedFields: [String: [UInt8]] = [:]

    public init() {}

    public func field(_ name: String) -> [UInt8]? {
        arrayNames.contains(name) ? nil : fields[name]
    }

    public func file(_ name: String) -> UploadedFile? {
        arrayNames.contains(name) ? nil : files[name]
    }

    /// Every file part's spool file (to be removed when the request ends).
    public private(set) var spooledPaths: [String] = []

    mutating func setField(_ rawName: [UInt8], _ value: [UInt8]) {
        let (name, isArray) = Self.phpName(rawName)
        guard !name.isEmpty else { return }
        if isArray {
            arrayNames.insert(name)
            arrayValues[name, default: []].append(value)
            let whole = String(decoding: rawName.prefix { $0 != 0 }, as: UTF8.self)
            if whole.hasSuffix("][]") {
                arrayValues[String(whole.dropLast(2)), default: []].append(value)
            } else if !whole.hasSuffix("[]") {
                nestedFields[whole] = value
            }
        } else {
            fields[name] = value
        }
    }

    mutating func addFile(_ rawName: [UInt8], _ file: UploadedFile) {
        if let path = file.spoolPath { spooledPaths.append(path) }
        let (name, isArray) = Self.phpName(rawName)
        guard !name.isEmpty else { return }
        if isArray { arrayNames.insert(name) } else { files[name] = file }
    }

    /// PHP's variable-name rules for form fields: a name ends at a NUL (PHP
    /// reads it as a C string), the part before `[` is the key (and the
    /// value becomes an array); spaces and dots become `_`.
    static func phpName(_ sent: [UInt8]) -> (String, isArray: Bool) {
        let raw = sent.firstIndex(of: 0).map { Array(sent[..<$0]) } ?? sent
        var name = raw
        var isArray = false
        if let bracket = raw.firstIndex(of: UInt8(ascii: "[")), bracket > 0,
           raw[bracket...].contains(UInt8(ascii: "]")) {
            name = Array(raw[..<bracket])
            isArray = true
        }
        let mapped = name.map { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ".") ? UInt8(ascii: "_") : $0 }
        return (String(decoding: mapped, as: UTF8.self), isArray)
    }
}

/// A file part, spooled to disk as it arrived.
public struct UploadedFile: Sendable, Equatable {
    /// The client's file name: informational only, never used for a path.
    public var filename: [UInt8]
    public var contentType: [UInt8]
    /// Where the bytes were spooled; nil when the part had an empty filename
    /// (what a browser sends for an empty file input: PHP's UPLOAD_ERR_NO_FILE).
    public var spoolPath: String?
    public var size: Int
}

/// `application/x-www-form-urlencoded`, with PHP's rules: pairs split on `&`,
/// both sides url-decoded, a pair without `=` has an empty value.
public enum URLEncodedForm {
    public static func parse(_ body: [UInt8]) -> FormData {
        var form = FormData()
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                form.setField(PHPStrings.urlDecode(pair[..<equals]), PHPStrings.urlDecode(pair[(equals + 1)...]))
            } else {
                form.setField(PHPStrings.urlDecode(pair), [])
            }
        }
        return form
    }
}
