/// Bounds how many workers compute an Argon2 hash at the same time. Each
/// hash holds `password_hash_memory_kib` (19 MiB by default) while it runs;
/// more hashes at once than there are CPUs only add memory, not speed. So
/// with 32 workers and 2 CPUs a flood of logins takes 2 x 19 MiB, not 32 x.
/// In the host-wide state file, the bound holds for every process of the
/// installation (mod_fcgid's, CGI's), and across reloads.
public final class HashingGate: SlotGate, @unchecked Sendable {
    public convenience init() { self.init(purpose: "password hashing slots") }
}
