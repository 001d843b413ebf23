/// A value in PHP's session serialization (`session.serialize_handler = php`).
public enum PHPValue: Equatable, Sendable {
    case string([UInt8])
    case int(Int64)
    case double(String)
    case bool(Bool)
    case null
    /// An array or object, kept as its serialized bytes so it is written back unchanged.
    case serialized([UInt8])

    /// The value as PHP's `(int)` would see it.
    public var intValue: Int64 {
        switch self {
        case .string(let bytes): PHPStrings.intCast(bytes)
        case .int(let value): value
        case .double(let text): PHPStrings.intCast(Array(text.utf8))
        case .bool(let value): value ? 1 : 0
        case .null, .serialized: 0
        }
    }
}

public enum PHPSessionCodecError: Error, Equatable {
    case malformed(offset: Int)
}

/// PHP's session file format: `name|<serialize()d value>` repeated, e.g.
/// `IdUser|s:1:"7";`. Sessions written by the PHP version decode here and
/// ours decode in PHP, so either can run against the same session directory.
public enum PHPSessionCodec {
    public static func encode(_ entries: [(String, PHPValue)]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, value) in entries {
            out.append(contentsOf: name.utf8)
            out.append(UInt8(ascii: "|"))
            switch value {
            case .string(let bytes):
                out.append(contentsOf: "s:\(bytes.count):\"".utf8)
                out.append(contentsOf: bytes)
                out.append(contentsOf: "\";".utf8)
            case .int(let value): out.append(contentsOf: "i:\(value);".utf8)
            case .double(let text): out.append(contentsOf: "d:\(text);".utf8)
            case .bool(let value): out.append(contentsOf: "b:\(value ? 1 : 0);".utf8)
            case .null: out.append(contentsOf: "N;".utf8)
            case .serialized(let bytes): out.append(contentsOf: bytes)
            }
        }
        return out
    }

    public static func decode(_ data: [UInt8]) throws(PHPSessionCodecError) -> [(String, PHPValue)] {
        var entries: [(String, PHPValue)] = []
        var position = 0
        while position < data.count {
            guard let bar = data[position...].firstIndex(of: UInt8(ascii: "|")) else {
                throw .malformed(offset: position)
            }
            let name = String(decoding: data[position..<bar], as: UTF8.self)
            var reader = Reader(data: data, position: bar + 1)
            let valueStart = reader.position
            let value = try reader.readValue(depth: 0)
            if case .serialized = value {
                entries.append((name, .serialized(Array(data[valueStart..<reader.position]))))
            } else {
                entries.append((name, value))
            }
            position = reader.position
        }
        return entries
    }

    private struct Reader {
        let data: [UInt8]
        var position: Int

        mutating func expect(_ byte: UInt8) throws(PHPSessionCodecError) {
            guard position < data.count, data[position] == byte else { throw .malformed(offset: position) }
            position += 1
        }

        /// Bytes up to (not including) `terminator`, which is consumed.
        mutating func readUntil(_ terminator: UInt8) throws(PHPSessionCodecError) -> ArraySlice<UInt8> {
            guard let end = data[position...].firstIndex(of: terminator) else { throw .malformed(offset: position) }
            defer { position = end + 1 }
            return data[position..<end]
        }

        mutating func readInt(until terminator: UInt8) throws(PHPSessionCodecError) -> Int64 {
            let start = position
            guard let value = Int64(String(decoding: try readUntil(terminator), as: UTF8.self)) else {
                throw .malformed(offset: start)
            }
            return value
        }

        mutating func readValue(depth: Int) throws(PHPSessionCodecError) -> PHPValue {
            guard depth < 32, position + 1 < data.count else { throw .malformed(offset: position) }
            let kind = data[position]
            position += 1
            if kind == UInt8(ascii: "N") { try expect(UInt8(ascii: ";")); return .null }
            try expect(UInt8(ascii: ":"))
            switch kind {
            case UInt8(ascii: "s"):
                let length = try readInt(until: UInt8(ascii: ":"))
                guard length >= 0, length <= data.count - position - 3 else { throw .malformed(offset: position) }
                try expect(UInt8(ascii: "\""))
                let bytes = Array(data[position..<(position + Int(length))])
                position += Int(length)
                try expect(UInt8(ascii: "\""))
                try expect(UInt8(ascii: ";"))
                return .string(bytes)
            case UInt8(ascii: "i"):
                return .int(try readInt(until: UInt8(ascii: ";")))
            case UInt8(ascii: "b"):
                return .bool(try readInt(until: UInt8(ascii: ";")) != 0)
            case UInt8(ascii: "d"):
                return .double(String(decoding: try readUntil(UInt8(ascii: ";")), as: UTF8.self))
            case UInt8(ascii: "a"), UInt8(ascii: "O"):
                if kind == UInt8(ascii: "O") {
                    // O:<len>:"<class>":<count>:{…}
                    let length = try readInt(until: UInt8(ascii: ":"))
                    guard length >= 0, length <= data.count - position else { throw .malformed(offset: position) }
                    position += Int(length) + 2
                    try expect(UInt8(ascii: ":"))
                }
                let count = try readInt(until: UInt8(ascii: ":"))
                guard count >= 0, count <= data.count else { throw .malformed(offset: position) }
                try expect(UInt8(ascii: "{"))
                for _ in 0..<(count * 2) { _ = try readValue(depth: depth + 1) }
                try expect(UInt8(ascii: "}"))
                return .serialized([])
            default:
                throw .malformed(offset: position - 2)
            }
        }
    }
}
