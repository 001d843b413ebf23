#if canImport(Glibc)
import Glibc
#endif

/// What a configuration allows that is probably not meant: said by
/// `--check-config` and at every start, never refused (each has its uses).
extension Configuration {
    /// The password of the examples and of older `make up` stacks.
    static let wellKnownDatabasePassword = "ireport"

    public var warnings: [String] {
        var warnings = unknownVariables
        if database.password == Self.wellKnownDatabasePassword {
            warnings.append("the database password is the well-known one of the examples (\(Self.wellKnownDatabasePassword)): "
                            + "choose your own (ALTER USER ... IDENTIFIED BY, then db_url)")
        }
        if let mode = Self.mode(of: sessionDirectory), mode & (S_IWGRP | S_IWOTH) != 0 {
            warnings.append("session_dir \(sessionDirectory) may be written by other users (mode \(String(mode & 0o7777, radix: 8))): "
                            + "this server ignores session files it does not own, but give it a folder of its own "
                            + "(owned by its user, 0700; docs/SECURITY.md, Sessions)")
        }
        if listensOnEveryAddress && listenAllowedClients.isEmpty {
            warnings.append("listen = \(listen) accepts FastCGI connections from every address: "
                            + "set listen_allowed_clients to your web servers (or listen on 127.0.0.1 or a unix socket)")
        }
        if !replicas.isEmpty && !database.fromURL {
            warnings.append("db_replicas without db_url: the replicas' user, password and database come from db_url only, "
                            + "so every read stays on the primary (give db_url)")
        }
        if !livePublishURL.isEmpty && livePublishKey.count < 16 {
            warnings.append("live_publish_url without a live_publish_key of 16 or more letters and digits (the key of "
                            + "nginx's publisher location, deploy/nginx/ireporter-live.conf): no live stream")
        }
        if !streamAnswerFile.isEmpty && AppServices.Policy(self).streamCacheMillis == 0 {
            warnings.append("stream_answer_file is off with the stream cache off (stream_cache_ms = 0, or db_replicas): "
                            + "nginx asks the server for every stream")
        }
        if uploadDeadline > 0 && requestTimeout > 0 && uploadDeadline >= requestTimeout {
            warnings.append("upload_deadline (\(uploadDeadline) s) is not below request_timeout (\(requestTimeout) s): "
                            + "a slow upload's worker is killed before the upload can give up cleanly")
        }
        return warnings
    }

    /// A TCP `listen` without a host, or on the wildcard address.
    private var listensOnEveryAddress: Bool {
        guard !listen.isEmpty, !listen.hasPrefix("/"), !listen.hasPrefix("."), let colon = listen.lastIndex(of: ":") else {
            return false
        }
        return ["", "*", "0.0.0.0", "[::]", "::"].contains(String(listen[..<colon]))
    }

    private static func mode(of path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode : nil
    }
}
