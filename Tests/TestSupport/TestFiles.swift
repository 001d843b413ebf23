#if canImport(Glibc)
import Glibc
#endif

// Files for the tests of every target: scratch directories and whole-file reads.

/// A scratch directory removed with its owner.
public final class ScratchDirectory {
    public let path: String

    public init(_ label: String) {
        var template = Array("/tmp/ireporter-\(label)-XXXXXX".utf8CString)
        path = String(cString: mkdtemp(&template))
    }

    deinit { _ = system("rm -rf '\(path)'") }

    /// The names in it, sorted.
    public var entries: [String] { (try? Self.names(in: path)) ?? [] }

    /// The names in a directory (without `.` and `..`), sorted.
    public static func names(in directory: String) throws -> [String] {
        guard let dir = opendir(directory) else { throw TestFileError.cannotOpen(directory) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Writes a file; returns its path.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) -> String {
        let full = "\(path)/\(name)"
        let file = fopen(full, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        return full
    }
}

public enum TestFileError: Error {
    case cannotOpen(String)
}
