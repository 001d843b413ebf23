import CLibXML2

/// An XML document libxml2 could not read, or one this reader refuses: its
/// `xmlParserErrors` code (0 for a refusal of ours: too large, a DTD) and
/// its message.
public struct XMLError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String

    public var description: String { "XML error \(code): \(message)" }
}

/// A document parsed by libxml2, owned (freed in deinit). Read as data from
/// a server, never trusted: at most `maxBytes`, nothing fetched from the
/// network, and no DTD (S3 writes none), so no entity of the document's own
/// is ever expanded (a billion laughs is refused); the predefined entities
/// and character references (`&amp;`, `&#38;`) are read as their characters.
final class ParsedXML {
    private let document: xmlDocPtr

    /// libxml2's global set-up, once per process before the first parse.
    private static let globalSetUp: Void = { xmlInitParser() }()

    init(_ bytes: [UInt8], maxBytes: Int = 16 << 20) throws(XMLError) {
        guard bytes.count <= maxBytes else {
            throw XMLError(code: 0, message: "a document of \(bytes.count) bytes (at most \(maxBytes))")
        }
        _ = Self.globalSetUp
        guard let context = xmlNewParserCtxt() else { throw XMLError(code: Int32(XML_ERR_NO_MEMORY.rawValue), message: "out of memory") }
        defer { xmlFreeParserCtxt(context) }
        // Not XML_PARSE_NOENT (entities substituted), XML_PARSE_DTDLOAD nor
        // XML_PARSE_HUGE (libxml2's limits lifted); errors are not printed.
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        // The first error says what is wrong; libxml2's last one is often
        // only the premature end that followed it.
        let firstError = FirstError()
        context.pointee._private = Unmanaged.passUnretained(firstError).toOpaque()
        context.pointee.sax.pointee.serror = { userData, error in
            guard let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue,
                  let box = userData?.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private else { return }
            let first = Unmanaged<FirstError>.fromOpaque(box).takeUnretainedValue()
            guard first.error == nil else { return }
            let message = error.pointee.message.map { String(cString: $0) } ?? ""
            first.error = XMLError(code: error.pointee.code, message: "\(message.trimmingSpaces) (line \(error.pointee.line))")
        }
        let parsed = withExtendedLifetime(firstError) {
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    xmlCtxtReadMemory(context, $0.baseAddress, Int32($0.count), nil, nil, options)
                }
            }
        }
        guard let parsed else { throw firstError.error ?? XMLError(code: 0, message: "not a document") }
        guard parsed.pointee.intSubset == nil && parsed.pointee.extSubset == nil else {
            xmlFreeDoc(parsed)
            throw XMLError(code: 0, message: "a document with a DTD")
        }
        document = parsed
    }

    deinit { xmlFreeDoc(document) }

    /// Where libxml2's error handler leaves the parse's first error.
    private final class FirstError {
        var error: XMLError?
    }

    /// The root element; nil for a document without one.
    var root: Element? {
        xmlDocGetRootElement(document).map { Element(node: $0, document: self) }
    }

    /// An element of the document, which it keeps alive.
    struct Element {
        fileprivate let node: xmlNodePtr
        fileprivate let document: ParsedXML

        /// Its local name (without a namespace prefix).
        var name: String { String(cString: node.pointee.name) }

        /// Its text: the text and CDATA directly in it, in order.
        var text: String {
            var bytes: [UInt8] = []
            var child = node.pointee.children
            while let current = child {
                if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                   let content = current.pointee.content {
                    var byte = content
                    while byte.pointee != 0 {
                        bytes.append(byte.pointee)
                        byte += 1
                    }
                }
                child = current.pointee.next
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Its child elements named `name`, in order.
        func children(_ name: String) -> [Element] {
            var found: [Element] = []
            var child = node.pointee.children
            while let current = child {
                if current.pointee.type == XML_ELEMENT_NODE, String(cString: current.pointee.name) == name {
                    found.append(Element(node: current, document: document))
                }
                child = current.pointee.next
            }
            return found
        }

        /// The text of its first child element named `name`; nil when it has none.
        func childText(_ name: String) -> String? { children(name).first?.text }
    }
}
