// swift-tools-version:6.0
import PackageDescription

// The C libraries are imported through module maps that include the
// Debian -dev packages' headers directly (no pkg-config: gdlib's cflags carry
// -DAVIF_DLL, which SwiftPM rejects), but for libxml2, whose headers are in a
// folder of their own (pkg-config's libxml-2.0 gives it). `scripts/deps.sh`
// installs them.
let package = Package(
    name: "ireporter",
    products: [
        .executable(name: "ireporter", targets: ["ireporter"]),
        .library(name: "IReporterKit", targets: ["IReporterKit"]),
    ],
    targets: [
        .systemLibrary(name: "CFastCGI", providers: [.apt(["libfcgi-dev"])]),
        .systemLibrary(name: "CMariaDB", providers: [.apt(["libmariadb-dev"])]),
        .systemLibrary(name: "CGD", providers: [.apt(["libgd-dev"])]),
        .systemLibrary(name: "CArgon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // libjpeg reports errors by longjmp, which Swift cannot express: this
        // small C target owns the decode and hands back a gd image or an error.
        .target(name: "CJpegScale", dependencies: ["CGD"],
                linkerSettings: [.linkedLibrary("jpeg")]),
        // glibc's GNU extensions (getrandom, mkostemp, memmem, ...), which
        // Swift's Glibc module does not import.
        .target(name: "CSystem"),
        .target(name: "IReporterKit",
                dependencies: ["CFastCGI", "CMariaDB", "CGD", "CJpegScale", "CSystem", "CArgon2", "CHiredis", "CCurl", "CCrypto", "CLibXML2"],
                swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "ireporter", dependencies: ["IReporterKit"],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        // Scratch directories, file reads, test photos, a private Redis and the
        // counters' common behaviour, shared by the test targets.
        .target(name: "TestSupport", dependencies: ["CGD", "IReporterKit"], path: "Tests/TestSupport",
                swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(name: "UnitTests", dependencies: ["IReporterKit", "TestSupport"],
                    exclude: ["Imaging/EffectReferences"], // read by path (EffectTests)
                    swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(name: "IntegrationTests", dependencies: ["IReporterKit", "CGD", "TestSupport"],
                    swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
