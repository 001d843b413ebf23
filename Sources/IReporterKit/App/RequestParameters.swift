/// A request's named parameters, whatever carried them: the form data of
/// the 2012 app today (`FormData`), a JSON body tomorrow. Commands decode
/// their input from this, so a new carrier is an adapter, not a change to
/// every command.
public protocol RequestParameters {
    /// A text parameter's raw bytes, if sent.
    func field(_ name: String) -> [UInt8]?
    /// A file parameter, if sent.
    func file(_ name: String) -> UploadedFile?
    /// Every uploaded file's spool file: the request's to remove when it is
    /// answered, unless a command moved one into place.
    var spooledPaths: [String] { get }
}

extension RequestParameters {
    public var spooledPaths: [String] { [] }
}

extension FormData: RequestParameters {}
