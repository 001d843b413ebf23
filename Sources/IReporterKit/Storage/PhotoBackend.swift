/// Where the photos are kept (the `photo_store` setting).
public enum PhotoBackend: String, CaseIterable, Sendable {
    /// `upload_dir` (`UploadFolder`), served by the web server from disk.
    case files
    /// The bucket of `s3_url` (`S3PhotoFileStore`), served through the server.
    case s3
}
