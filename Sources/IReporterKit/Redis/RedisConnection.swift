#if canImport(Glibc)
import Glibc
#endif
import CHiredis

/// One connection to Redis through hiredis, made when first used and owning
/// its `redisContext` (freed in deinit). Each command has the timeout of
/// the settings; a connection found lost is dropped and the command (or the
/// `reconnectingOnce` block it runs in) is sent once more on a new one.
/// Not shared between threads: each worker has its own.
public final class RedisConnection {
    public let settings: RedisSettings
    private var context: UnsafeMutablePointer<redisContext>?
    /// Inside `reconnectingOnce`: the block is what is retried, not each command.
    private var inRetryBlock = false

    public init(settings: RedisSettings) { self.settings = settings }

    deinit { disconnect() }

    public func disconnect() {
        if let context { redisFree(context) }
        context = nil
    }

    /// Sends one command and returns its reply.
    @discardableResult
    public func command(_ arguments: [UInt8]...) throws(RedisError) -> RedisReply {
        try command(arguments)
    }

    @discardableResult
    public func command(_ arguments: [[UInt8]]) throws(RedisError) -> RedisReply {
        if inRetryBlock { return try send(arguments) }
        return try reconnectingOnce { () throws(RedisError) in try send(arguments) }
    }

    /// Runs `body`, whose commands go over this connection; when the
    /// connection turns out to be lost, `body` runs once more on a new one
    /// (so it must be safe to repeat after a command that never reached
    /// Redis). Not after a reply that did not come in time: the command may
    /// have run, and a count would count twice, a lock be asked for again.
    public func reconnectingOnce<T>(_ body: () throws(RedisError) -> T) throws(RedisError) -> T {
        let outer = inRetryBlock
        inRetryBlock = true
        defer { inRetryBlock = outer }
        if outer { return try body() }
        do {
            return try body()
        } catch where error.isConnectionLost && !error.isReplyTimeout {
            disconnect()
            return try body()
        }
    }

    @discardableResult
    private func send(_ arguments: [[UInt8]]) throws(RedisError) -> RedisReply {
        let context = try connected()
        let reply = try Self.call(context, arguments)
        guard let reply else {
            var error = RedisError(context: context)
            error.place = settings.place
            disconnect()  // a context with an error set is unusable
            throw error
        }
        defer { freeReplyObject(reply) }
        return try Self.copy(reply.assumingMemoryBound(to: redisReply.self), place: settings.place)
    }

    private static func call(_ context: UnsafeMutablePointer<redisContext>, _ arguments: [[UInt8]]) throws(RedisError) -> UnsafeMutableRawPointer? {
        // hiredis takes (pointer, length) pairs: values may hold any byte, NUL included.
        let buffers = arguments.map { argument in
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(argument.count, 1))
            argument.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count) }
            }
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        var pointers: [UnsafePointer<CChar>?] = buffers.map { UnsafePointer($0) }
        let lengths = arguments.map(\.count)
        return redisCommandArgv(context, Int32(arguments.count), &pointers, lengths)
    }

    private static func copy(_ reply: UnsafeMutablePointer<redisReply>, place: String) throws(RedisError) -> RedisReply {
        let value = reply.pointee
        func text() -> [UInt8] {
            guard let string = value.str else { return [] }
            return Array(UnsafeRawBufferPointer(start: string, count: value.len))
        }
        switch value.type {
        case REDIS_REPLY_STRING: return .string(text())
        case REDIS_REPLY_INTEGER: return .integer(Int64(value.integer))
        case REDIS_REPLY_NIL: return .null
        case REDIS_REPLY_STATUS: return .status(String(decoding: text(), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            var error = RedisError(code: .reply, message: String(decoding: text(), as: UTF8.self))
            error.place = place
            throw error
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            for index in 0..<value.elements {
                // An error inside an array (EXEC's per-command replies) fails the whole.
                elements.append(try copy(value.element[index]!, place: place))
            }
            return .array(elements)
        default:
            throw RedisError(code: .unexpectedReply, message: "reply type \(value.type)")
        }
    }

    /// The live context, connecting (and authenticating, selecting the
    /// database) first if there is none.
    private func connected() throws(RedisError) -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        let timeout = timeval(tv_sec: settings.timeoutMillis / 1000, tv_usec: (settings.timeoutMillis % 1000) * 1000)
        let made: UnsafeMutablePointer<redisContext>? = switch settings.address {
        case .tcp(let host, let port): redisConnectWithTimeout(host, port, timeout)
        case .unix(let path): redisConnectUnixWithTimeout(path, timeout)
        }
        guard let made else {
            throw RedisError(code: .library(REDIS_ERR_OOM), message: "cannot allocate a redisContext")
        }
        guard made.pointee.err == 0, redisSetTimeout(made, timeout) == REDIS_OK else {
            var error = RedisError(context: made)
            error.place = settings.place
            redisFree(made)
            throw error
        }
        context = made
        do {
            if let password = settings.password {
                try send([Array("AUTH".utf8)] + (settings.user.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)])
            }
            if settings.database != 0 { try send([Array("SELECT".utf8), Array(String(settings.database).utf8)]) }
        } catch {
            disconnect()
            throw error
        }
        return made
    }
}

// MARK: - Pub/sub

extension RedisConnection {
    /// Subscribes to `channel`: from here on the connection only receives
    /// (`receive`) and pings (`sendPing`), until it is disconnected.
    public func subscribe(_ channel: String) throws(RedisError) {
        disconnect()  // never resubscribe a connection in an unknown state
        let confirmation = try send([Array("SUBSCRIBE".utf8), Array(channel.utf8)])
        guard case .array(let parts) = confirmation, parts.first == .string(Array("subscribe".utf8)) else {
            disconnect()
            throw RedisError(code: .unexpectedReply, message: "SUBSCRIBE answered \(confirmation)")
        }
    }

    /// The next reply of a subscribed connection (a message, a ping's
    /// answer), waiting up to `waitingMillis` for it; nil if none came.
    /// A lost connection throws (and is dropped).
    public func receive(waitingMillis: Int32) throws(RedisError) -> RedisReply? {
        guard let context else { throw RedisError(code: .library(REDIS_ERR_EOF), message: "not subscribed") }
        if let reply = try bufferedReply(context) { return reply }
        var watched = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&watched, 1, waitingMillis) > 0 else { return nil }
        guard redisBufferRead(context) == REDIS_OK else { throw lost(context) }
        return try bufferedReply(context)
    }

    /// A PING on a subscribed connection, its answer left to `receive`: it
    /// tells a connection that still works from one that silently died.
    public func sendPing() throws(RedisError) {
        guard let context else { throw RedisError(code: .library(REDIS_ERR_EOF), message: "not subscribed") }
        let command = Array("PING".utf8)
        let appended = command.withUnsafeBufferPointer { bytes -> Int32 in
            var argument: UnsafePointer<CChar>? = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            var length = bytes.count
            return redisAppendCommandArgv(context, 1, &argument, &length)
        }
        guard appended == REDIS_OK else { throw lost(context) }
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw lost(context) }
        }
    }

    private func bufferedReply(_ context: UnsafeMutablePointer<redisContext>) throws(RedisError) -> RedisReply? {
        var reply: UnsafeMutableRawPointer?
        guard redisGetReplyFromReader(context, &reply) == REDIS_OK else { throw lost(context) }
        guard let reply else { return nil }
        defer { freeReplyObject(reply) }
        return try Self.copy(reply.assumingMemoryBound(to: redisReply.self), place: settings.place)
    }

    /// The context's error, the context dropped (it is unusable).
    private func lost(_ context: UnsafeMutablePointer<redisContext>) -> RedisError {
        var error = RedisError(context: context)
        if error.message.isEmpty { error = RedisError(code: .library(REDIS_ERR_EOF), message: "connection closed") }
        error.place = settings.place
        disconnect()
        return error
    }
}

extension RedisConnection {
    /// The same, with every argument given as text.
    @discardableResult
    public func command(_ arguments: String...) throws(RedisError) -> RedisReply {
        try command(arguments.map { Array($0.utf8) })
    }
}
