import FuzzSupport
import IReporterKit

// URLEncodedForm.parse against a reference written from its documented rules
// (pairs split on `&`, both sides url-decoded, a pair without `=` has an
// empty value, the last of a repeated name wins, a name ends at a NUL,
// `name[...]` marks an array, spaces and dots in names become `_`), and
// FormData's accessors.

struct Reference {
    var fields: [String: [UInt8]] = [:]
    var arrayNames: Set<String> = []
}

func referenceParse(_ body: [UInt8]) -> Reference {
    var out = Reference()
    for pair in body.split(separator: 0x26) {
        let equals = pair.firstIndex(of: 0x3D)
        let rawName = Array(PHPStrings.urlDecode(pair[..<(equals ?? pair.endIndex)]).prefix { $0 != 0 })
        let value = equals.map { PHPStrings.urlDecode(pair[($0 + 1)...]) } ?? []
        var name = rawName
        var isArray = false
        if let open = rawName.firstIndex(of: 0x5B), open > 0, rawName[(open + 1)...].contains(0x5D) {
            name = Array(rawName[..<open])
            isArray = true
        }
        let key = String(decoding: name.map { $0 == 0x20 || $0 == 0x2E ? 0x5F : $0 }, as: UTF8.self)
        if key.isEmpty { continue }
        if isArray { out.arrayNames.insert(key) } else { out.fields[key] = value }
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)
    let form = URLEncodedForm.parse(input)
    if dumpMode {
        var line = "form\t\(hex(input))"
        for key in form.fields.keys.sorted() where !form.arrayNames.contains(key) {
            line += "\t\(hex(key.utf8))=\(hex(form.fields[key]!))"
        }
        for key in form.arrayNames.sorted() { line += "\t\(hex(key.utf8))[]" }
        print(line)
    }
    let reference = referenceParse(input)
    check(form.fields == reference.fields, "fields of \(show(input)): \(form.fields), expected \(reference.fields)")
    check(form.arrayNames == reference.arrayNames, "array names of \(show(input)): \(form.arrayNames), expected \(reference.arrayNames)")
    check(form.files.isEmpty && form.spooledPaths.isEmpty, "a urlencoded body produced files")
    for (name, value) in form.fields {
        check(!name.isEmpty && !name.utf8.contains(0x20) && !name.utf8.contains(0x2E), "bad field name \(show(Array(name.utf8)))")
        check(form.field(name) == (form.arrayNames.contains(name) ? nil : value), "field(\(name)) is wrong")
    }
    for name in form.arrayNames { check(form.field(name) == nil && form.file(name) == nil, "array \(name) readable as a string") }
    return 0
}
