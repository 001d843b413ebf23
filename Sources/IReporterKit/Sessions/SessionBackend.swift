/// Where the sessions are kept (the `session_store` setting).
public enum SessionBackend: String, CaseIterable, Sendable {
    /// PHP-compatible `sess_<id>` files in `session_dir`.
    case files
    /// phpredis-compatible `PHPREDIS_SESSION:<id>` keys in `redis_url`.
    case redis
}
