#if canImport(Glibc)
import Glibc
#endif

/// A zip archive (PKWARE's APPNOTE 6.3) written to a file as it goes, for
/// `export`: entries stored, not deflated (JPEGs do not shrink), each local
/// header given its CRC-32 and size once its data is written (the file is
/// seekable: no data descriptors), names in UTF-8. Only the central
/// directory stays in memory, a few dozen bytes an entry; past 4 GiB or
/// 65,535 entries it is found through Zip64 records. An entry itself stays
/// under 4 GiB.
struct ZipWriter {
    private struct Entry {
        let name: [UInt8]
        let offset: UInt64
        var crc = CRC32()
        var size: UInt64 = 0
    }

    private let fd: Int32
    private let path: String
    /// The entries' time, as MS-DOS stores it (local header, directory).
    private let dosTime: UInt16
    private let dosDate: UInt16
    /// Where the classic 32-bit fields end; lowered by the tests.
    private let limit32: UInt64
    private let limit16: Int
    private var written: UInt64 = 0
    private var entries: [Entry] = []
    private var open: Entry?

    /// Writes to `fd` (at its start) of the file at `path` (in errors).
    init(fd: Int32, path: String, modified: Int64, limit32: UInt64 = 0xFFFF_FFFF, limit16: Int = 0xFFFF) {
        (self.fd, self.path, self.limit32, self.limit16) = (fd, path, limit32, limit16)
        (dosTime, dosDate) = Self.dosTimeAndDate(modified)
    }

    /// Starts an entry; its data follows with `write`, until `endEntry`.
    mutating func beginEntry(_ name: String) throws(SystemError) {
        precondition(open == nil, "an entry is open")
        let entry = Entry(name: Array(name.utf8), offset: written)
        // CRC and sizes are zero until `endEntry` puts them in place.
        try append(localHeader(entry))
        open = entry
    }

    mutating func write(_ bytes: [UInt8]) throws(SystemError) {
        guard var entry = open else { preconditionFailure("no entry open") }
        entry.crc.update(bytes)
        entry.size += UInt64(bytes.count)
        guard entry.size < 0xFFFF_FFFF else { throw SystemError("zip entry \(String(decoding: entry.name, as: UTF8.self)) over 4 GiB", code: EFBIG) }
        open = entry
        try append(bytes)
    }

    mutating func endEntry() throws(SystemError) {
        guard let entry = open else { preconditionFailure("no entry open") }
        var fields = ByteWriter()
        fields.u32(entry.crc.value)
        fields.u32(UInt32(entry.size))
        fields.u32(UInt32(entry.size))
        // CRC-32, compressed and uncompressed size: 14 bytes into the local header.
        let patched = fields.bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(entry.offset + 14)) }
        guard patched == 12 else { throw SystemError("write \(path)") }
        entries.append(entry)
        open = nil
    }

    /// One whole entry.
    mutating func add(_ name: String, _ bytes: [UInt8]) throws(SystemError) {
        try beginEntry(name)
        try write(bytes)
        try endEntry()
    }

    /// The central directory and its end; the archive's size.
    mutating func finish() throws(SystemError) -> UInt64 {
        precondition(open == nil, "an entry is open")
        let directoryOffset = written
        for entry in entries { try append(directoryHeader(entry)) }
        let directorySize = written - directoryOffset
        let needsZip64 = entries.count >= limit16 || directoryOffset >= limit32 || directorySize >= limit32
        var end = ByteWriter()
        if needsZip64 {
            let recordOffset = written
            end.u32(0x0606_4B50)            // Zip64 end of central directory record
            end.u64(44)                     // its size after this field
            end.u16(45); end.u16(45)        // made by, needed: 4.5
            end.u32(0); end.u32(0)          // this disk, the directory's disk
            end.u64(UInt64(entries.count)); end.u64(UInt64(entries.count))
            end.u64(directorySize)
            end.u64(directoryOffset)
            end.u32(0x0706_4B50)            // its locator
            end.u32(0)
            end.u64(recordOffset)
            end.u32(1)
        }
        end.u32(0x0605_4B50)                // end of central directory
        end.u16(0); end.u16(0)
        let count = needsZip64 ? 0xFFFF : UInt16(entries.count)
        end.u16(count); end.u16(count)
        end.u32(needsZip64 ? 0xFFFF_FFFF : UInt32(directorySize))
        end.u32(needsZip64 ? 0xFFFF_FFFF : UInt32(directoryOffset))
        end.u16(0)                          // no comment
        try append(end.bytes)
        return written
    }

    private func localHeader(_ entry: Entry) -> [UInt8] {
        var header = ByteWriter()
        header.u32(0x0403_4B50)
        header.u16(20)                      // needed: 2.0
        header.u16(0x0800)                  // the name is UTF-8
        header.u16(0)                       // stored
        header.u16(dosTime); header.u16(dosDate)
        header.u32(0); header.u32(0); header.u32(0)
        header.u16(UInt16(entry.name.count))
        header.u16(0)
        header.bytes += entry.name
        return header.bytes
    }

    private func directoryHeader(_ entry: Entry) -> [UInt8] {
        let farOffset = entry.offset >= limit32
        var header = ByteWriter()
        header.u32(0x0201_4B50)
        header.u16(0x0300 | 45)             // made by: Unix, 4.5
        header.u16(farOffset ? 45 : 20)
        header.u16(0x0800)
        header.u16(0)
        header.u16(dosTime); header.u16(dosDate)
        header.u32(entry.crc.value)
        header.u32(UInt32(entry.size)); header.u32(UInt32(entry.size))
        header.u16(UInt16(entry.name.count))
        header.u16(farOffset ? 12 : 0)      // extra field: Zip64's offset
        header.u16(0)                       // no comment
        header.u16(0)                       // disk
        header.u16(0)                       // internal attributes
        header.u32(0o100644 << 16)          // a regular file, rw-r--r--
        header.u32(farOffset ? 0xFFFF_FFFF : UInt32(entry.offset))
        header.bytes += entry.name
        if farOffset {
            header.u16(0x0001); header.u16(8)
            header.u64(entry.offset)
        }
        return header.bytes
    }

    private mutating func append(_ bytes: [UInt8]) throws(SystemError) {
        if let code = bytes.withUnsafeBytes({ writeAll(fd, $0) }) { throw SystemError("write \(path)", code: code) }
        written += UInt64(bytes.count)
    }

    /// MS-DOS time and date (two-second steps, years from 1980) of `unixSeconds`, in UTC.
    static func dosTimeAndDate(_ unixSeconds: Int64) -> (UInt16, UInt16) {
        var seconds = time_t(max(unixSeconds, 315_532_800)) // 1980-01-01
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let time = UInt16(parts.tm_hour) << 11 | UInt16(parts.tm_min) << 5 | UInt16(parts.tm_sec / 2)
        let date = UInt16(min(parts.tm_year - 80, 127)) << 9 | UInt16(parts.tm_mon + 1) << 5 | UInt16(parts.tm_mday)
        return (time, date)
    }
}

/// Little-endian fields, as zip writes them.
private struct ByteWriter {
    var bytes: [UInt8] = []
    mutating func u16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
    mutating func u32(_ value: UInt32) { u16(UInt16(value & 0xFFFF)); u16(UInt16(value >> 16)) }
    mutating func u64(_ value: UInt64) { u32(UInt32(value & 0xFFFF_FFFF)); u32(UInt32(value >> 32)) }
}

/// CRC-32 as zip (and zlib, PNG, Ethernet) computes it: polynomial
/// 0xEDB88320, reflected, a byte at a time from a table.
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { byte in
        (0..<8).reduce(UInt32(byte)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    private var state: UInt32 = 0xFFFF_FFFF

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            Self.table.withUnsafeBufferPointer { table in
                for byte in buffer { state = table[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8) }
            }
        }
    }

    var value: UInt32 { state ^ 0xFFFF_FFFF }
}
