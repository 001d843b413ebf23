#if canImport(Glibc)
import Glibc
#endif
import IReporterKit

// All work happens in IReporterKit's nonisolated functions: closures written
// in top-level code are main-actor isolated in Swift 6 and trap when a C
// library calls them from another thread.
exit(IReporterCommandLine.run(Array(CommandLine.arguments.dropFirst())))
