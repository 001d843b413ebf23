// swift-tools-version:6.0
import PackageDescription

// Coverage-guided fuzzing of IReporterKit's parsers (libFuzzer + ASan).
// Built and run by Fuzz/run.sh; see docs/FUZZING.md. Build by hand with
//
//   swift build -c debug --sanitize fuzzer --sanitize address -Xswiftc -use-ld=lld
//
// The main package is a path dependency. Its identity is the name of its
// directory, which differs between checkouts (main, a CI clone, ...).
let mainPackage = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "main"
let kit = Target.Dependency.product(name: "IReporterKit", package: mainPackage)

let harnesses = ["FuzzMultipart", "FuzzURLEncoded", "FuzzCookies", "FuzzSession", "FuzzStrings", "FuzzJSON", "FuzzJSONRPC", "FuzzImages", "FuzzFlickr"]

let package = Package(
    name: "ireporter-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzSupport", swiftSettings: [.swiftLanguageMode(.v6)]),
    ] + harnesses.map { name in
        .executableTarget(name: name, dependencies: ["FuzzSupport", kit],
                          swiftSettings: [.swiftLanguageMode(.v6)])
    }
)
