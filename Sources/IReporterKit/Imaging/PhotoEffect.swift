import CGD
import CJpegScale

/// The effects `upload` can render into a photo and `preview` shows: the
/// tutorial's sepia and more, each a short recipe of libgd's own filters
/// (`gdImageGrayScale`, `gdImageColor`, `gdImageContrast`,
/// `gdImageBrightness`, `gdImageConvolution`, …), so the server renders
/// exactly what PHP's `imagefilter()` would.
public enum PhotoEffect: String, CaseIterable, Sendable {
    case sepia, mono, noir, vivid, fade, warm, cool, sharpen, blur, vignette

    /// What the `effects` command says of it.
    public var summary: String {
        switch self {
        case .sepia: "brown-toned black and white (grayscale, then a warm tint)"
        case .mono: "black and white"
        case .noir: "black and white with hard contrast"
        case .vivid: "stronger contrast and crisper detail"
        case .fade: "washed-out, lighter, softer contrast"
        case .warm: "a warm (orange) tint"
        case .cool: "a cool (blue) tint"
        case .sharpen: "crisper detail (a 3x3 sharpening kernel)"
        case .blur: "a soft Gaussian blur"
        case .vignette: "corners darkened towards the edges"
        }
    }

    /// Applies the effect to `image` in place; false when gd refused (an
    /// image that is not truecolor, which ours always are).
    func apply(to image: GDImage) -> Bool {
        let p = image.pointer
        switch self {
        case .sepia: return gdImageGrayScale(p) != 0 && gdImageColor(p, 90, 60, 30, 0) != 0
        case .mono: return gdImageGrayScale(p) != 0
        case .noir: return gdImageGrayScale(p) != 0 && gdImageContrast(p, -45) != 0 && gdImageBrightness(p, -10) != 0
        case .vivid: return gdImageContrast(p, -20) != 0 && Self.convolve(p, Self.mildSharpening)
        case .fade: return gdImageContrast(p, 35) != 0 && gdImageBrightness(p, 30) != 0
        case .warm: return gdImageColor(p, 30, 10, -20, 0) != 0
        case .cool: return gdImageColor(p, -20, 0, 30, 0) != 0
        case .sharpen: return Self.convolve(p, Self.sharpening)
        case .blur: return gdImageGaussianBlur(p) != 0
        case .vignette: image.darkenTowardsTheEdges(); return true
        }
    }

    struct Unknown: APIFailure {
        var message: String { "Unknown effect: the effects command lists them" }
    }

    private static let sharpening: [Float] = [0, -1, 0, -1, 5, -1, 0, -1, 0]
    private static let mildSharpening: [Float] = [0, -0.5, 0, -0.5, 3, -0.5, 0, -0.5, 0]

    /// gdImageConvolution with a 3x3 kernel whose weights sum to 1.
    private static func convolve(_ image: gdImagePtr, _ kernel: [Float]) -> Bool {
        var rows = [(kernel[0], kernel[1], kernel[2]), (kernel[3], kernel[4], kernel[5]), (kernel[6], kernel[7], kernel[8])]
        return rows.withUnsafeMutableBufferPointer { gdImageConvolution(image, $0.baseAddress, 1, 0) } != 0
    }
}
