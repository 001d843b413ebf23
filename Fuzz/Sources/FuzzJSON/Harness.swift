import FuzzSupport
import IReporterKit

// PHPJSONWriter.string: the output must be JSON (checked by an independent
// validator), pure printable ASCII with `/` escaped, decode back to the input
// when it is valid UTF-8, and be `null` when it is not (PHP's
// JSON_PARTIAL_OUTPUT_ON_ERROR). Also inside a document, with a slice (a
// collection whose indices do not start at 0) and a String.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = bytes(data, size)
    let isUTF8 = String(validating: input, as: UTF8.self) != nil

    var writer = PHPJSONWriter()
    writer.string(input)
    let out = writer.bytes
    if dumpMode { print("json\t\(hex(input))\t\(hex(out))") }
    var validator = JSONValidator(out)
    check(validator.validate(), "not JSON: \(show(out)) for \(show(input))")
    if isUTF8 {
        check(validator.strings.count == 1 && validator.strings[0] == input,
              "\(show(out)) decodes to \(validator.strings.map { $0.map { show($0) } ?? "lone surrogate" }), not \(show(input))")
    } else {
        check(out == Array("null".utf8), "invalid UTF-8 \(show(input)) written as \(show(out))")
    }
    check(out.allSatisfy { $0 >= 0x20 && $0 < 0x80 }, "non-ASCII or control byte in \(show(out))")
    for i in out.indices where out[i] == 0x2F { check(i > 0 && out[i - 1] == 0x5C, "unescaped / in \(show(out))") }

    // In a document, as the API writes its answers.
    let tail = input.isEmpty ? input[...] : input[1...]
    let text = String(decoding: input, as: UTF8.self) // invalid sequences become U+FFFD
    var document = PHPJSONWriter(capacity: 0)
    document.raw("{\"a\":")
    document.string(tail)
    document.raw(",\"b\":[")
    document.nullableString(nil)
    document.raw(",")
    document.string(text)
    document.raw(",")
    document.nullableString(input)
    document.raw("]}")
    var docValidator = JSONValidator(document.bytes)
    check(docValidator.validate(), "document is not JSON: \(show(document.bytes))")
    let tailUTF8 = String(validating: Array(tail), as: UTF8.self) != nil
    var expected: [[UInt8]?] = [Array("a".utf8)]
    if tailUTF8 { expected.append(Array(tail)) }
    expected += [Array("b".utf8), Array(text.utf8)]
    if isUTF8 { expected.append(input) }
    check(docValidator.strings == expected, "document strings \(docValidator.strings) != \(expected)")
    return 0
}
